/*
 * mkfs.c - laying out and formatting a file system.
 *
 * sufs_mkfs_layout() computes the geometry; sufs_mkfs() writes the groups'
 * metadata and an empty root directory through the ordinary layers and
 * returns the file system open, so that mkfs -d fills it with the ordinary
 * operations.  The superblocks are written by sufs_close(), last.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#define DEF_BYTES_PER_INODE 16384u

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* A uuid that depends only on the inputs (reproducible images). */
static void derived_uuid(const struct sufs_super *sb, uint8_t uuid[16])
{
	uint8_t seed[8 + 8 + 64 + 16];
	uint32_t c = 0;
	unsigned i;

	put64(seed, (uint64_t)sb->mkfs_time);
	put64(seed + 8, sb->blocks_count);
	memcpy(seed + 16, sb->label, 64);
	put32(seed + 80, sb->block_size);
	put32(seed + 84, sb->blocks_per_group);
	put32(seed + 88, sb->inodes_per_group);
	put32(seed + 92, sb->groups_count);
	for (i = 0; i < 4; i++) {
		c = (uint32_t)crc32(c ^ i, seed, sizeof(seed));
		put32(uuid + 4 * i, c);
	}
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x50); /* name-based */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
}

static int random_uuid(uint8_t uuid[16])
{
	size_t got = 0;

	while (got < 16) {
		ssize_t n = getrandom(uuid + got, 16 - got, 0);
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
	return 0;
}

/* The members of release 0.1, which a size of 0 stands for (sufs.h). */
#define MKFS_OPTS_FIRST (offsetof(struct sufs_mkfs_opts, time_nsec) + sizeof(uint32_t))

/* The caller's options as this release knows them (base/opts.c). */
static int mkfs_opts(const struct sufs_mkfs_opts *given, struct sufs_mkfs_opts *o)
{
	return opts_take(o, sizeof(*o), given, MKFS_OPTS_FIRST);
}

static int mkfs_layout(uint64_t bytes, const struct sufs_mkfs_opts *o, struct sufs_super *sb)
{
	uint32_t bs = o->block_size ? o->block_size : SUFS_DEF_BLOCK_SIZE;
	uint32_t bpg, ipb, ipg, g;
	uint64_t blocks, groups, inodes, last, free_blocks = 0;
	struct sufs_group_layout l;
	const char *why;
	int err;

	if (bs < SUFS_MIN_BLOCK_SIZE || bs > SUFS_MAX_BLOCK_SIZE || (bs & (bs - 1)))
		return -EINVAL;
	bpg = o->blocks_per_group ? o->blocks_per_group : 8 * bs;
	if (bpg < 64 || bpg % 8 || bpg > 8 * bs)
		return -EINVAL;
	blocks = bytes / bs;
	if (blocks < 64)
		return -SUFS_EGEOMETRY;
	groups = div_up(blocks, bpg);
	if (groups > UINT32_MAX)
		return -SUFS_EGEOMETRY;
	ipb = bs / SUFS_INODE_SIZE;
	if (o->inodes) {
		inodes = o->inodes;
	} else if (o->bytes_per_inode) {
		inodes = bytes / o->bytes_per_inode;
	} else {
		/* the default ratio asks for no more than the groups hold (a
		 * group's bitmap is one block: 8 inodes a byte), which it would
		 * with 64 KiB blocks */
		uint64_t most = groups * ((uint64_t)8 * bs);
		if (most > UINT32_MAX / ipb * ipb)
			most = UINT32_MAX / ipb * ipb;
		inodes = bytes / DEF_BYTES_PER_INODE;
		if (inodes > most / groups / ipb * ipb * groups)
			inodes = most / groups / ipb * ipb * groups;
	}
	if (inodes < 16)
		inodes = 16;

	memset(sb, 0, sizeof(*sb));
	sb->magic = SUFS_MAGIC;
	sb->version = SUFS_VERSION;
	sb->block_size = bs;
	sb->inode_size = SUFS_INODE_SIZE;
	sb->blocks_per_group = bpg;
	for (;;) {
		ipg = (uint32_t)div_up(div_up(inodes, groups), ipb) * ipb;
		if (ipg > 8 * bs || groups * ipg > UINT32_MAX)
			return -SUFS_EGEOMETRY;
		sb->blocks_count = blocks;
		sb->groups_count = (uint32_t)groups;
		sb->inodes_per_group = ipg;
		sb->inodes_count = (uint32_t)(groups * ipg);
		sb->gdt_blocks = (uint32_t)div_up(groups * SUFS_GROUP_DESC_SIZE, bs);
		/* a last group too small for its own metadata is dropped */
		last = blocks - (groups - 1) * bpg;
		if (groups > 1 && last < sufs_group_overhead(sb, (uint32_t)groups - 1) + 16) {
			groups--;
			blocks = groups * bpg;
			continue;
		}
		break;
	}
	sb->root_ino = SUFS_ROOT_INO;
	sb->first_ino = SUFS_FIRST_INO;
	sb->state = SUFS_STATE_CLEAN;
	sb->write_mode = SUFS_MODE_SOFTDEP;
	if (!o->no_xattr)
		sb->features_ro_compat |= SUFS_FEATURE_RO_XATTR;
	memcpy(sb->label, o->label, sizeof(sb->label));
	if (o->fixed_time) {
		sb->mkfs_time = o->time_sec;
	} else {
		sb->mkfs_time = time(NULL);
	}
	sb->write_time = sb->mkfs_time;
	sb->mount_time = 0;
	for (g = 0; g < sb->groups_count; g++) {
		sufs_group_layout(sb, g, &l);
		if (l.first_data + (g == 0) > l.end)
			return -SUFS_EGEOMETRY; /* no room for the root directory */
		free_blocks += l.end - l.first_data;
	}
	sb->free_blocks = free_blocks;
	sb->free_inodes = sb->inodes_count - (SUFS_FIRST_INO - 1);
	if (o->have_uuid)
		memcpy(sb->uuid, o->uuid, 16);
	else if (o->fixed_time)
		derived_uuid(sb, sb->uuid);
	else if ((err = random_uuid(sb->uuid)) != 0)
		return err;
	err = sufs_super_check(sb, 0, &why);
	return err ? -SUFS_EGEOMETRY : 0;
}

int sufs_mkfs_layout(uint64_t bytes, const struct sufs_mkfs_opts *given, struct sufs_super *sb)
{
	struct sufs_mkfs_opts o;
	int err = mkfs_opts(given, &o);

	return err ? err : mkfs_layout(bytes, &o, sb);
}

/* Set the bits of blocks that are not free: the group's metadata, and the
 * bits past the end of a short last group. */
static int init_group_bitmaps(struct sufs_fs *fs, uint32_t g)
{
	struct sufs_group_layout l;
	struct buf *bb, *ib;
	uint64_t nbits, i;
	int err;

	sufs_group_layout(&fs->sb, g, &l);
	err = buf_get_new(fs, l.block_bitmap, BUF_BITMAP, &bb);
	if (err)
		return err;
	err = buf_get_new(fs, l.inode_bitmap, BUF_BITMAP, &ib);
	if (err) {
		buf_put(fs, bb);
		return err;
	}
	buf_update(fs, bb, 0, fs->bsize, UPD_BMSAFEMAP, NULL);
	buf_update(fs, ib, 0, fs->bsize, UPD_BMSAFEMAP, NULL);
	nbits = (uint64_t)fs->bsize * 8;
	for (i = 0; i < nbits; i++)
		if (i < l.first_data - l.start || i >= l.end - l.start)
			bb->data[i >> 3] |= (uint8_t)(1u << (i & 7));
	for (i = fs->sb.inodes_per_group; i < nbits; i++)
		ib->data[i >> 3] |= (uint8_t)(1u << (i & 7));
	buf_put(fs, bb);
	buf_put(fs, ib);
	fs->groups[g].free_blocks = (uint32_t)(l.end - l.first_data);
	fs->groups[g].free_inodes = fs->sb.inodes_per_group;
	fs->groups[g].used_dirs = 0;
	return sufs_dev_zero(fs->dev, l.inode_table << fs->bshift,
			     (uint64_t)l.inode_table_blocks << fs->bshift);
}

static int make_root(struct sufs_fs *fs, const struct sufs_mkfs_opts *o)
{
	struct sufs_inode in;
	struct waits iw = { 0 };
	int err;

	/* inode 1 is reserved; the root is inode 2 */
	if ((err = bitmap_set(fs, SUFS_BITMAP_INODE, 1, 1, NULL)) < 0 ||
	    (err = bitmap_set(fs, SUFS_BITMAP_INODE, SUFS_ROOT_INO, 1, NULL)) < 0)
		return err;
	fs->groups[0].used_dirs++;
	memset(&in, 0, sizeof(in));
	in.mode = (uint16_t)(S_IFDIR | (o->root_mode ? o->root_mode & 07777 : 0755));
	in.links = 2;
	in.uid = o->root_uid;
	in.gid = o->root_gid;
	fs_now(fs, &in.mtime, &in.mtime_ns);
	in.atime = in.ctime = in.crtime = in.mtime;
	in.atime_ns = in.ctime_ns = in.crtime_ns = in.mtime_ns;
	in.generation = fs->next_generation++;
	err = dir_init(fs, SUFS_ROOT_INO, &in, SUFS_ROOT_INO, &iw);
	if (!err)
		err = inode_store(fs, SUFS_ROOT_INO, &in, UPD_INODEDEP, &iw, NULL);
	return err;
}

int sufs_mkfs(struct sufs_dev *dev, const struct sufs_mkfs_opts *given, struct sufs_fs **out)
{
	struct sufs_mkfs_opts opts, *o = &opts;
	struct sufs_super sb;
	struct sufs_fs *fs;
	uint8_t zero[SUFS_SB_SIZE] = { 0 };
	uint64_t off;
	uint32_t g;
	unsigned n;
	int err;

	if (!dev->writable)
		return -EROFS;
	err = mkfs_opts(given, o);
	if (!err)
		err = mkfs_layout(dev->size, o, &sb);
	if (err)
		return err;
	/* First wipe every superblock location: an interrupted mkfs must not
	 * leave an old, valid-looking superblock behind. */
	err = sufs_dev_write(dev, SUFS_SB_OFFSET, zero, sizeof(zero));
	for (n = 0; !err && sufs_backup_offset(&sb, n, &off) == 0; n++)
		err = sufs_dev_write(dev, off, zero, sizeof(zero));
	if (err)
		return err;
	sb.sb_group = 0;
	err = fs_alloc_struct(dev, &sb, SUFS_OPEN_RDWR, &fs);
	if (err)
		return err;
	fs->mkfs = 1;
	/* Nothing claims to be a file system until the superblock goes out,
	 * last: mkfs needs no ordering, so it writes without any. */
	fs->mode = SUFS_MODE_ASYNC;
	if (o->fixed_time)
		sufs_set_clock(fs, o->time_sec, o->time_nsec);
	fs->next_generation = 1;
	fs->sb.free_blocks = sb.free_blocks;
	fs->sb.free_inodes = sb.inodes_count;
	for (g = 0; g < sb.groups_count && !err; g++)
		err = init_group_bitmaps(fs, g);
	memset(fs->gdt_dirty, 1, sb.gdt_blocks);
	if (!err)
		err = make_root(fs, o);
	if (err) {
		fs->dev = NULL; /* the caller owns the device on failure */
		fs_free_struct(fs);
		return err;
	}
	*out = fs;
	return 0;
}
