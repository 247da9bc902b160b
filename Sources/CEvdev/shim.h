#include <libevdev/libevdev.h>
#include <linux/input.h>
#include <libevdev/libevdev-uinput.h>
