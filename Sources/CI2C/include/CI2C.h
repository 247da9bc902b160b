#ifndef CI2C_H
#define CI2C_H
/// SMBus transfers over Linux i2c-dev (/dev/i2c-N) through the I2C_SMBUS ioctl, as
/// i2c-tools' libi2c does, without depending on it. Every symbol has the `CI2C_` prefix;
/// every function returns a non-negative result or a negative errno.
#include <stdint.h>

/// Opens /dev/i2c-`bus` (O_RDWR|O_CLOEXEC) and selects the 7-bit `address` (I2C_SLAVE; EBUSY
/// when a kernel driver owns it). Returns the fd (the caller closes it) or -errno.
int CI2C_open(int bus, int address);
/// SMBus "read byte data": the byte, 0…255, or -errno.
int CI2C_read_byte_data(int fd, uint8_t reg);
/// SMBus "write byte data". 0 or -errno.
int CI2C_write_byte_data(int fd, uint8_t reg, uint8_t value);
/// SMBus "I2C block read" of `length` (1…32) bytes from `reg` into `out`: the count or -errno.
int CI2C_read_i2c_block(int fd, uint8_t reg, uint8_t length, uint8_t *out);
/// close(2). 0 or -errno.
int CI2C_close(int fd);

#endif
