// SMBus over i2c-dev with the I2C_SMBUS ioctl; see include/CI2C.h.
#include "CI2C.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/i2c.h>
#include <linux/i2c-dev.h>

static int smbus(int fd, char rw, uint8_t command, int size, union i2c_smbus_data *data) {
    struct i2c_smbus_ioctl_data args = { .read_write = rw, .command = command, .size = (uint32_t)size, .data = data };
    int r;
    do { r = ioctl(fd, I2C_SMBUS, &args); } while (r < 0 && errno == EINTR);
    return r < 0 ? (errno > 0 ? -errno : -EIO) : 0;
}

int CI2C_open(int bus, int address) {
    char path[32];
    snprintf(path, sizeof path, "/dev/i2c-%d", bus);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return errno > 0 ? -errno : -EIO;
    if (ioctl(fd, I2C_SLAVE, (unsigned long)address) < 0) {
        int e = errno > 0 ? errno : EIO;
        close(fd);
        return -e;
    }
    return fd;
}

int CI2C_read_byte_data(int fd, uint8_t reg) {
    union i2c_smbus_data data;
    int r = smbus(fd, I2C_SMBUS_READ, reg, I2C_SMBUS_BYTE_DATA, &data);
    return r < 0 ? r : data.byte;
}

int CI2C_write_byte_data(int fd, uint8_t reg, uint8_t value) {
    union i2c_smbus_data data;
    data.byte = value;
    return smbus(fd, I2C_SMBUS_WRITE, reg, I2C_SMBUS_BYTE_DATA, &data);
}

int CI2C_read_i2c_block(int fd, uint8_t reg, uint8_t length, uint8_t *out) {
    if (length == 0 || length > I2C_SMBUS_BLOCK_MAX || !out) return -EINVAL;
    union i2c_smbus_data data;
    data.block[0] = length;
    int r = smbus(fd, I2C_SMBUS_READ, reg, I2C_SMBUS_I2C_BLOCK_DATA, &data);
    if (r < 0) return r;
    int n = data.block[0] < length ? data.block[0] : length;
    memcpy(out, &data.block[1], (size_t)n);
    return n;
}

int CI2C_close(int fd) { return close(fd) < 0 ? -errno : 0; }
