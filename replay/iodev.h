/*
 * iodev.h - a device that wraps the image's device to count, record and
 * cut off what the file system writes.
 *
 * Every block write and every barrier passes through here on its way to
 * the image.  The wrapper counts them, can append them to an I/O log (the
 * format is in man/sufs-replay.8), and can simulate a crash: past a given
 * number of block writes or barriers, nothing more reaches the image and
 * every write fails with -EIO, so that the library call in progress fails
 * and the program abandons the file system.
 */
#ifndef SUFS_REPLAY_IODEV_H
#define SUFS_REPLAY_IODEV_H

#include <stdint.h>

#include "sufs.h"

/* The I/O log: a header, then records. */
#define IOLOG_MAGIC       "SUFSIOLG"  /* 8 bytes */
#define IOLOG_VERSION     1u
#define IOLOG_HEADER_SIZE 24u         /* magic, version u32, block size u32, image size u64 */
#define IOLOG_WRITE       'W'         /* block u64, count u32, count blocks of data */
#define IOLOG_BARRIER     'B'

struct iodev;

/* What went through the wrapper. */
struct iodev_counts {
	uint64_t blocks;          /* blocks written (a write of n blocks counts n) */
	uint64_t writes;          /* write calls */
	uint64_t barriers;
	int crashed;              /* the crash point was reached: writing stopped */
	int log_error;            /* 0, or the errno of a failed write to the log */
};

/*
 * Open the image at path for writing and wrap it.  The block size (for
 * counting and for the log) comes from the image's superblock; an image
 * whose superblock is not sufs is left for sufs_open_dev() to refuse.
 * iodev_dev() is the device to open the file system on.  flags are more
 * of sufs_dev_open()'s (SUFS_DEV_DIRECT).
 */
int iodev_open(const char *path, unsigned flags, struct iodev **out);
struct sufs_dev *iodev_dev(struct iodev *io);
uint32_t iodev_block_size(const struct iodev *io);

/* Stop writing after n blocks have been written (n = 0: before the first),
 * or at the first write after n barriers. */
void iodev_crash_after_blocks(struct iodev *io, uint64_t n);
void iodev_crash_after_barriers(struct iodev *io, uint64_t n);

/* Record every write and barrier from now on in a new file at path. */
int iodev_log_open(struct iodev *io, const char *path);

void iodev_counts(const struct iodev *io, struct iodev_counts *out);

/*
 * Free the wrapper.  Once its device has been handed to sufs_open_dev(),
 * sufs_close() or sufs_abandon() closes it (and with it the image and the
 * log); a device still open is closed here.  Returns 0, or the negated
 * errno of a failed write to the log.
 */
int iodev_free(struct iodev *io);

#endif
