/*
 * memdev.h - a sufs device over bytes in memory, for the fuzz targets.
 *
 * Reads past the end give zeros (as an image file's would); writes past the
 * end fail with -ENOSPC: the device never grows.  Closing it frees the
 * device but not the bytes, which stay the caller's.
 */
#ifndef SUFS_FUZZ_MEMDEV_H
#define SUFS_FUZZ_MEMDEV_H

#include <stddef.h>
#include <stdint.h>

#include "sufs.h"

/* A device over size bytes at bytes, writable or not; NULL when out of
 * memory. */
struct sufs_dev *memdev_new(uint8_t *bytes, size_t size, int writable);

#endif
