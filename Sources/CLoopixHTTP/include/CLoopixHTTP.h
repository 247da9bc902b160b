#ifndef CLOOPIXHTTP_H
#define CLOOPIXHTTP_H
/// A small, synchronous face on libmicrohttpd for Swift (which cannot call its variadic
/// MHD_start_daemon): one thread per connection, so a handler may block (a stream waits for
/// the next frame, a conversion takes a second) without holding up anyone else; limits on
/// connections (in all and per address), their memory (headers), request bodies and idle
/// time, a deadline for a request's headers. A path that spells a separator or a NUL in
/// percent-encoding (%2F, %5C, %00) gets 400 before the handler sees it. The handler fills a reply: bytes (copied), part of a file (sent by the kernel), or a
/// stream read from a callback until it ends. Functions returning int return 0 or -errno.
#include <stddef.h>
#include <stdint.h>

typedef struct CLoopixHTTP_Server CLoopixHTTP_Server;
typedef struct CLoopixHTTP_Reply CLoopixHTTP_Reply;

typedef struct {
    const char *method;
    /// The path, percent-decoded by libmicrohttpd, without the query.
    const char *url;
    /// The request's body (POST), NULL when none.
    const unsigned char *body;
    size_t body_length;
    /// The peer's address, e.g. "192.168.1.20".
    char client[64];
    /// For CLoopixHTTP_header and CLoopixHTTP_query.
    void *connection;
} CLoopixHTTP_Request;

typedef struct {
    /// An IPv4 or IPv6 address to listen on ("0.0.0.0", "::", "127.0.0.1").
    const char *address;
    /// 0: any free port (see CLoopixHTTP_port).
    unsigned short port;
    /// Connections at once, in all and from one address.
    unsigned int connection_limit;
    unsigned int per_address_limit;
    /// Seconds a connection may be idle (a slowloris client is cut off after this).
    unsigned int idle_timeout;
    /// Seconds a request may take to send its request line and headers, however steadily it
    /// sends (from the connection's start, or the previous request's end). When every
    /// connection is taken, the one that has been slowest to send its headers makes room for
    /// a new one.
    unsigned int header_timeout;
    /// Bytes a connection may use for its request line and headers.
    size_t memory_limit;
    /// Largest request body taken; a larger one gets 413.
    size_t max_body;
} CLoopixHTTP_Options;

/// Called on the connection's own thread; must fill `reply` (an unfilled one is a 500).
typedef void (*CLoopixHTTP_Handler)(void *context, const CLoopixHTTP_Request *request, CLoopixHTTP_Reply *reply);

/// For a stream: writes at most `max` bytes into `buffer`, blocking until it has some;
/// returns how many, or -1 at the end (the client left or the stream is over).
typedef long (*CLoopixHTTP_Read)(void *context, char *buffer, size_t max);
/// Frees a stream's context once the connection is done with it.
typedef void (*CLoopixHTTP_Free)(void *context);

/// Listens (the socket is bound here, so a busy port is -EADDRINUSE) and starts serving.
int CLoopixHTTP_start(const CLoopixHTTP_Options *options, CLoopixHTTP_Handler handler, void *context,
                      CLoopixHTTP_Server **out);
/// The port it listens on.
unsigned short CLoopixHTTP_port(const CLoopixHTTP_Server *server);
/// Stops accepting, closes every connection and waits for their threads. NULL is fine.
void CLoopixHTTP_stop(CLoopixHTTP_Server *server);

/// A request header's value, NULL when absent (valid during the handler).
const char *CLoopixHTTP_header(const CLoopixHTTP_Request *request, const char *name);
/// A query argument's value, NULL when absent.
const char *CLoopixHTTP_query(const CLoopixHTTP_Request *request, const char *name);

void CLoopixHTTP_replyBytes(CLoopixHTTP_Reply *reply, unsigned int status, const char *content_type,
                            const void *bytes, size_t length);
/// Sends `length` bytes of `fd` from `offset`; takes the fd (closed when sent).
void CLoopixHTTP_replyFile(CLoopixHTTP_Reply *reply, unsigned int status, const char *content_type,
                           int fd, uint64_t offset, uint64_t length);
/// Streams what `read` returns until it returns -1; `release` frees `context` afterwards.
void CLoopixHTTP_replyStream(CLoopixHTTP_Reply *reply, unsigned int status, const char *content_type,
                             void *context, CLoopixHTTP_Read read, CLoopixHTTP_Free release);
/// Adds a header to the reply (after one of the reply functions).
void CLoopixHTTP_replyHeader(CLoopixHTTP_Reply *reply, const char *name, const char *value);

#endif
