#define _GNU_SOURCE
#include "CLoopixHTTP.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/// One open connection, as the header watch sees it. Linked into the server's list from
/// libmicrohttpd's "started" notification to its "closed" one, which comes before the socket
/// is closed: under `watch_lock`, `fd` is always the connection's own.
typedef struct Connection {
    struct Connection *prev, *next;
    int fd;
    /// When the request now being read began (the connection's start, or the end of the
    /// previous request on a kept-alive connection), monotonic ns.
    uint64_t request_started;
    /// Its headers are all in (the handler has been called): it is not slow to send.
    int headers_done;
    /// Already shut down by the watch.
    int shed;
} Connection;

struct CLoopixHTTP_Server {
    struct MHD_Daemon *daemon;
    unsigned short port;
    CLoopixHTTP_Handler handler;
    void *context;
    size_t max_body;
    unsigned int connection_limit;
    uint64_t header_timeout_ns;
    pthread_mutex_t watch_lock;
    pthread_cond_t watch_wake;
    Connection *connections;
    /// Connections open and not shed.
    unsigned int served;
    int stopping;
    pthread_t watch;
    int watch_started;
};

static uint64_t monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/// Ends a connection from outside its thread: the thread's next read sees the end and
/// libmicrohttpd closes it as if the client had gone. With `watch_lock` held.
static void shed(CLoopixHTTP_Server *server, Connection *c) {
    if (c->shed) return;
    c->shed = 1;
    server->served--;
    shutdown(c->fd, SHUT_RDWR);
}

/// The connection whose request has been waiting longest for its headers, except `besides`.
static Connection *slowest(CLoopixHTTP_Server *server, Connection *besides) {
    Connection *worst = NULL;
    for (Connection *c = server->connections; c; c = c->next) {
        if (c == besides || c->headers_done || c->shed) continue;
        if (!worst || c->request_started < worst->request_started) worst = c;
    }
    return worst;
}

static void notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
    CLoopixHTTP_Server *server = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        Connection *c = calloc(1, sizeof *c);
        if (!c || !info) {
            free(c);
            *socket_context = NULL;
            return;
        }
        c->fd = info->connect_fd;
        c->request_started = monotonic_ns();
        pthread_mutex_lock(&server->watch_lock);
        c->next = server->connections;
        if (c->next) c->next->prev = c;
        server->connections = c;
        server->served++;
        // Over the limit: the connection slowest to send its headers makes room; when every
        // other one is being served, the newcomer is the one turned away.
        if (server->served > server->connection_limit) {
            Connection *victim = slowest(server, c);
            shed(server, victim ? victim : c);
        }
        pthread_mutex_unlock(&server->watch_lock);
        *socket_context = c;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        Connection *c = *socket_context;
        if (!c) return;
        pthread_mutex_lock(&server->watch_lock);
        if (c->prev) c->prev->next = c->next; else server->connections = c->next;
        if (c->next) c->next->prev = c->prev;
        if (!c->shed) server->served--;
        pthread_mutex_unlock(&server->watch_lock);
        free(c);
        *socket_context = NULL;
    }
}

static Connection *connection_of(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/// Marks where a request's headers are all in (`done`) or a new one begins (`!done`).
static void mark_headers(CLoopixHTTP_Server *server, struct MHD_Connection *connection, int done) {
    Connection *c = connection_of(connection);
    if (!c) return;
    pthread_mutex_lock(&server->watch_lock);
    c->headers_done = done;
    if (!done) c->request_started = monotonic_ns();
    pthread_mutex_unlock(&server->watch_lock);
}

/// The header watch: four times a second, sheds every connection whose request has not
/// brought its complete headers within the header time, however steadily it trickles bytes.
static void *watch_headers(void *cls) {
    CLoopixHTTP_Server *server = cls;
    pthread_mutex_lock(&server->watch_lock);
    while (!server->stopping) {
        uint64_t now = monotonic_ns();
        for (Connection *c = server->connections; c; c = c->next) {
            if (!c->headers_done && now - c->request_started > server->header_timeout_ns) shed(server, c);
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250000000;
        if (until.tv_nsec >= 1000000000) { until.tv_sec++; until.tv_nsec -= 1000000000; }
        pthread_cond_timedwait(&server->watch_wake, &server->watch_lock, &until);
    }
    pthread_mutex_unlock(&server->watch_lock);
    return NULL;
}

struct CLoopixHTTP_Reply {
    struct MHD_Response *response;
    unsigned int status;
};

/// A request's body as it arrives (libmicrohttpd hands it over in pieces).
typedef struct {
    unsigned char *data;
    size_t length, capacity;
    int too_large;
    /// The handler has seen the headers.
    int started;
    /// The raw path spells a separator or a NUL in percent-encoding (%2F, %5C, %00).
    int encoded_separator;
} Upload;

/// Called with the raw request target as soon as the request line is in; what it returns is
/// the request's state (`*con_cls`). Decoded, "%2F" would be a real "/", and "%00" would cut
/// the path short: a path that spells either is refused, whatever it names.
static void *begin_request(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls;
    (void)connection;
    Upload *u = calloc(1, sizeof *u);
    if (!u) return NULL;
    size_t path_length = strcspn(uri, "?#");
    for (size_t i = 0; i + 2 < path_length; i++) {
        if (uri[i] != '%') continue;
        char a = uri[i + 1], b = uri[i + 2];
        if ((a == '2' && (b == 'f' || b == 'F')) || (a == '5' && (b == 'c' || b == 'C')) || (a == '0' && b == '0')) {
            u->encoded_separator = 1;
        }
    }
    return u;
}

typedef struct {
    void *context;
    CLoopixHTTP_Read read;
    CLoopixHTTP_Free release;
} Stream;

static ssize_t stream_read(void *cls, uint64_t pos, char *buffer, size_t max) {
    (void)pos;
    Stream *s = cls;
    long n = s->read(s->context, buffer, max);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void stream_free(void *cls) {
    Stream *s = cls;
    if (s->release) s->release(s->context);
    free(s);
}

static void set_response(CLoopixHTTP_Reply *reply, unsigned int status, const char *content_type,
                         struct MHD_Response *response) {
    if (reply->response) MHD_destroy_response(reply->response);
    reply->response = response;
    reply->status = status;
    if (response && content_type) MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
}

static enum MHD_Result queue_plain(struct MHD_Connection *c, unsigned int status, const char *text) {
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_size, void **con_cls) {
    (void)version;
    CLoopixHTTP_Server *server = cls;
    Upload *u = *con_cls;
    if (!u) return MHD_NO;  // begin_request could not allocate
    if (!u->started) {  // the headers are in; the body (if any) follows
        u->started = 1;
        mark_headers(server, connection, 1);
        if (u->encoded_separator) return queue_plain(connection, 400, "encoded separators are refused in paths\n");
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (!u->too_large) {
            if (u->length + *upload_size > server->max_body) {
                u->too_large = 1;
            } else {
                if (u->length + *upload_size > u->capacity) {
                    size_t capacity = (u->length + *upload_size) * 2;
                    unsigned char *grown = realloc(u->data, capacity);
                    if (!grown) return MHD_NO;
                    u->data = grown;
                    u->capacity = capacity;
                }
                memcpy(u->data + u->length, upload_data, *upload_size);
                u->length += *upload_size;
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (u->too_large) return queue_plain(connection, 413, "request body too large\n");

    CLoopixHTTP_Request request = {0};
    request.method = method;
    request.url = url;
    request.body = u->data;
    request.body_length = u->length;
    request.connection = connection;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info && info->client_addr) {
        const struct sockaddr *sa = info->client_addr;
        if (sa->sa_family == AF_INET) {
            inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, request.client, sizeof request.client);
        } else if (sa->sa_family == AF_INET6) {
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, request.client, sizeof request.client);
        }
    }
    CLoopixHTTP_Reply reply = {0};
    server->handler(server->context, &request, &reply);
    if (!reply.response) return queue_plain(connection, 500, "internal error\n");
    enum MHD_Result ret = MHD_queue_response(connection, reply.status, reply.response);
    MHD_destroy_response(reply.response);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *connection, void **con_cls, enum MHD_RequestTerminationCode code) {
    (void)code;
    mark_headers(cls, connection, 0);  // a kept-alive connection's next request starts now
    Upload *u = *con_cls;
    if (u) {
        free(u->data);
        free(u);
        *con_cls = NULL;
    }
}

static void stop_watch(CLoopixHTTP_Server *server) {
    if (server->watch_started) {
        pthread_mutex_lock(&server->watch_lock);
        server->stopping = 1;
        pthread_cond_signal(&server->watch_wake);
        pthread_mutex_unlock(&server->watch_lock);
        pthread_join(server->watch, NULL);
        server->watch_started = 0;
    }
    pthread_cond_destroy(&server->watch_wake);
    pthread_mutex_destroy(&server->watch_lock);
}

int CLoopixHTTP_start(const CLoopixHTTP_Options *o, CLoopixHTTP_Handler handler, void *context, CLoopixHTTP_Server **out) {
    struct sockaddr_storage address = {0};
    socklen_t address_length;
    int family;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&address;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&address;
    if (inet_pton(AF_INET, o->address, &v4->sin_addr) == 1) {
        family = AF_INET;
        v4->sin_family = AF_INET;
        v4->sin_port = htons(o->port);
        address_length = sizeof *v4;
    } else if (inet_pton(AF_INET6, o->address, &v6->sin6_addr) == 1) {
        family = AF_INET6;
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(o->port);
        address_length = sizeof *v6;
    } else {
        return -EINVAL;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // "::" takes IPv4 too
    if (bind(fd, (struct sockaddr *)&address, address_length) < 0 || listen(fd, 64) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    struct sockaddr_storage bound;
    socklen_t bound_length = sizeof bound;
    getsockname(fd, (struct sockaddr *)&bound, &bound_length);
    CLoopixHTTP_Server *server = calloc(1, sizeof *server);
    if (!server) {
        close(fd);
        return -ENOMEM;
    }
    server->port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port : ((struct sockaddr_in6 *)&bound)->sin6_port);
    server->handler = handler;
    server->context = context;
    server->max_body = o->max_body;
    server->connection_limit = o->connection_limit;
    server->header_timeout_ns = (uint64_t)o->header_timeout * 1000000000u;
    pthread_mutex_init(&server->watch_lock, NULL);
    pthread_cond_init(&server->watch_wake, NULL);  // timed waits on CLOCK_REALTIME
    int rc = pthread_create(&server->watch, NULL, watch_headers, server);
    if (rc != 0) {
        close(fd);
        pthread_cond_destroy(&server->watch_wake);
        pthread_mutex_destroy(&server->watch_lock);
        free(server);
        return -rc;
    }
    server->watch_started = 1;
    // libmicrohttpd's own limit leaves room above ours: a connection over our limit is let in
    // so that the slowest sender can make room for it (notify_connection).
    server->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL
                                          | (family == AF_INET6 ? MHD_USE_IPv6 : 0),
                                      0, NULL, NULL, access_handler, server,
                                      MHD_OPTION_LISTEN_SOCKET, fd,
                                      MHD_OPTION_CONNECTION_LIMIT, (unsigned int)o->connection_limit * 2,
                                      MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)o->per_address_limit,
                                      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)o->idle_timeout,
                                      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)o->memory_limit,
                                      MHD_OPTION_NOTIFY_COMPLETED, completed, server,
                                      MHD_OPTION_NOTIFY_CONNECTION, notify_connection, server,
                                      MHD_OPTION_URI_LOG_CALLBACK, begin_request, NULL,
                                      MHD_OPTION_END);
    if (!server->daemon) {
        int e = errno ? errno : EIO;
        close(fd);
        stop_watch(server);
        free(server);
        return -e;
    }
    *out = server;
    return 0;
}

unsigned short CLoopixHTTP_port(const CLoopixHTTP_Server *server) { return server->port; }

void CLoopixHTTP_stop(CLoopixHTTP_Server *server) {
    if (!server) return;
    // MHD_stop_daemon closes the listening socket it was given, ends every connection and
    // joins their threads.
    MHD_stop_daemon(server->daemon);
    stop_watch(server);  // after the daemon: its connections' "closed" notifications use the lock
    free(server);
}

const char *CLoopixHTTP_header(const CLoopixHTTP_Request *request, const char *name) {
    return MHD_lookup_connection_value(request->connection, MHD_HEADER_KIND, name);
}

const char *CLoopixHTTP_query(const CLoopixHTTP_Request *request, const char *name) {
    return MHD_lookup_connection_value(request->connection, MHD_GET_ARGUMENT_KIND, name);
}

void CLoopixHTTP_replyBytes(CLoopixHTTP_Reply *reply, unsigned int status, const char *content_type, const void *bytes,
                            size_t length) {
    set_response(reply, status, content_type,
                 MHD_create_response_from_buffer(length, (void *)bytes, MHD_RESPMEM_MUST_COPY));
}

void CLoopixHTTP_replyFile(CLoopixHTTP_Reply *reply, unsigned int status, const char *content_type, int fd, uint64_t offset,
                           uint64_t length) {
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(length, fd, offset);
    if (!r) close(fd);
    set_response(reply, status, content_type, r);
}

void CLoopixHTTP_replyStream(CLoopixHTTP_Reply *reply, unsigned int status, const char *content_type, void *context,
                             CLoopixHTTP_Read read, CLoopixHTTP_Free release) {
    Stream *s = malloc(sizeof *s);
    if (!s) {
        if (release) release(context);
        set_response(reply, 500, NULL, NULL);
        return;
    }
    s->context = context;
    s->read = read;
    s->release = release;
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, stream_read, s, stream_free);
    if (!r) stream_free(s);
    set_response(reply, status, content_type, r);
}

void CLoopixHTTP_replyHeader(CLoopixHTTP_Reply *reply, const char *name, const char *value) {
    if (reply->response) MHD_add_response_header(reply->response, name, value);
}
