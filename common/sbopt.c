/*
 * sbopt.c - a backup superblock named by its block number, as debugfs -s
 * and dumpe2fs -o superblock= name one (sufs-dump -s, sufs-debug -s), and
 * an image opened from it.
 *
 * The block number alone says where the copy is only with a block size.
 * The copy itself says which: of the block sizes a file system may have,
 * the one whose copy at that block names that size and lies where its
 * group starts (sb_group * blocks_per_group).  BLOCK:BLOCKSIZE, as
 * fsck.sufs -s takes it, says both.
 */
#include "config.h"
#include "util.h"
#include "sufs.h"

#include <errno.h>
#include <string.h>

/* Is there a superblock copy for bs-byte blocks at block blk of dev? */
static int copy_at(struct sufs_dev *dev, uint64_t blk, uint32_t bs)
{
	uint8_t raw[SUFS_SB_SIZE];
	struct sufs_super sb;
	uint64_t off;

	if (blk > UINT64_MAX / bs)
		return 0;
	off = blk * bs;
	if (off > dev->size || dev->size - off < SUFS_SB_SIZE ||
	    sufs_dev_read(dev, off, raw, sizeof(raw)))
		return 0;
	sufs_super_decode(raw, &sb);
	return sb.magic == SUFS_MAGIC && sb.block_size == bs && sb.sb_group &&
	       (uint64_t)sb.sb_group * sb.blocks_per_group == blk;
}

int sb_find(const char *image, uint64_t blk, uint64_t *off, uint32_t *block_size)
{
	struct sufs_dev *dev;
	uint32_t bs;
	int rc = sufs_dev_open(image, 0, &dev);

	if (rc)
		return rc;
	rc = -ENOENT;
	for (bs = SUFS_MIN_BLOCK_SIZE; bs <= SUFS_MAX_BLOCK_SIZE && rc; bs *= 2) {
		if (copy_at(dev, blk, bs)) {
			*off = blk * bs;
			*block_size = bs;
			rc = 0;
		}
	}
	sufs_dev_close(dev);
	return rc;
}

int sb_option(const char *image, const char *arg, uint64_t *off)
{
	char buf[64], *colon;
	uint64_t blk, bs;
	uint32_t found;
	int rc;

	if (strlen(arg) >= sizeof(buf)) {
		errmsg("-s: not a block number, or BLOCK:BLOCKSIZE: %s", shown(arg));
		return EXIT_USAGE;
	}
	strcpy(buf, arg);
	colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	if (parse_u64(buf, &blk) || blk == 0 ||
	    (colon && (parse_u64(colon + 1, &bs) || bs < SUFS_MIN_BLOCK_SIZE ||
		       bs > SUFS_MAX_BLOCK_SIZE || (bs & (bs - 1)) || blk > UINT64_MAX / bs))) {
		errmsg("-s: not a block number, or BLOCK:BLOCKSIZE: %s", shown(arg));
		return EXIT_USAGE;
	}
	if (colon) {
		*off = blk * bs;
		return EXIT_OK;
	}
	rc = sb_find(image, blk, off, &found);
	if (rc == -ENOENT)
		errmsg("%s: no superblock copy at block %llu, for any block size (-s names "
		       "a backup by the block it starts)", shown(image), (unsigned long long)blk);
	else if (rc)
		errmsg("cannot open %s: %s", shown(image), sufs_strerror(rc));
	return rc ? EXIT_IMAGE : EXIT_OK;
}

int open_image(const char *image, unsigned flags, uint64_t sb_offset, struct sufs_fs **fs)
{
	struct sufs_dev *dev;
	int rc;

	if (!sb_offset)
		return sufs_open(image, flags, fs);
	rc = sufs_dev_open(image, (flags & SUFS_OPEN_RDWR) ? SUFS_DEV_RDWR : 0, &dev);
	if (rc)
		return rc;
	rc = sufs_open_dev(dev, flags, sb_offset, fs);
	if (rc)
		sufs_dev_close(dev);
	return rc;
}
