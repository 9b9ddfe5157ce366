/*
 * sufs.h - the one public header of libsufs.
 *
 * Installed as <sufs/sufs.h>.  It declares the on-disk format (constants, the
 * decoded in-memory form of each on-disk record and the functions that turn one
 * into the other), the device interface and the file-system operations.
 * man/sufs.5 describes the format byte by byte; keep the two in step.
 *
 * Conventions: every function returns 0 or a negative error code (a negated
 * errno value, or a negated enum sufs_err value); results come back through
 * out-pointers.  sufs_strerror() turns any of these codes into a message.
 */
#ifndef SUFS_H
#define SUFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sufs_version.h" /* SUFS_LIB_VERSION and its parts */

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * Errors of our own, above the errno range.  Functions return -SUFS_E...;
 * errno-style failures come back as -errno (-ENOENT, -ENOSPC, ...).
 */
enum sufs_err {
	SUFS_EBASE = 4096,
	SUFS_EMAGIC,      /* no sufs superblock (wrong magic number) */
	SUFS_EVERSION,    /* format version this library does not know */
	SUFS_ECHECKSUM,   /* a checksum does not match the bytes it covers */
	SUFS_ECORRUPT,    /* a field holds a value that cannot be */
	SUFS_ETRUNCATED,  /* the image is shorter than its superblock says */
	SUFS_EGEOMETRY,   /* the requested layout does not fit or is invalid */
	SUFS_EINCOMPLETE, /* mkfs did not finish on this image */
	SUFS_EFEATURE,    /* the image uses a feature this library lacks */
	SUFS_ENOSLOT,     /* all snapshot slots are taken */
	SUFS_ENOTSNAP,    /* no snapshot of that name */
	SUFS_EBGREFUSED,  /* a background check is not possible: run a full check */
	SUFS_ESHORT,      /* the image is too small to hold a superblock */
	SUFS_ENOTIMAGE,   /* neither a regular file nor a block device */
	SUFS_EINUSE,      /* another program has the image open for writing */
	SUFS_EROFEATURE,  /* the image uses a feature this library may only read */
	SUFS_ELAST
};

/* A message for any return code of this library (0, -errno or -SUFS_E...). */
const char *sufs_strerror(int err);

/* ------------------------------------------------------------------------ */
/* On-disk format v1 (see man/sufs.5).  Every field is little-endian.        */
/* ------------------------------------------------------------------------ */

#define SUFS_MAGIC          0x53465553u /* "SUFS" read as bytes */
#define SUFS_VERSION        1u
#define SUFS_SB_OFFSET      1024u       /* byte offset of the primary superblock */
#define SUFS_SB_SIZE        1024u
#define SUFS_MIN_BLOCK_SIZE 1024u
#define SUFS_MAX_BLOCK_SIZE 65536u
#define SUFS_DEF_BLOCK_SIZE 4096u
#define SUFS_INODE_SIZE     256u
#define SUFS_GROUP_DESC_SIZE 64u
#define SUFS_NDIR           12u   /* direct block pointers in an inode */
#define SUFS_IND            12u   /* index of the single indirect pointer */
#define SUFS_DIND           13u   /* double indirect */
#define SUFS_TIND           14u   /* triple indirect */
#define SUFS_NBLOCKS        15u
#define SUFS_FAST_SYMLINK_MAX 120u /* a target this long or shorter lives in the inode */
#define SUFS_NAME_MAX       255u
#define SUFS_PATH_MAX       4096u /* a path, or a symlink's target, is shorter (and at most a block) */
#define SUFS_ROOT_INO       2u
#define SUFS_FIRST_INO      3u    /* inode 1 is reserved and never used */
#define SUFS_SNAP_SLOTS     20u
#define SUFS_DIR_TAIL_SIZE  8u    /* checksum tail at the end of each directory block */
#define SUFS_DIRENT_HDR     8u
#define SUFS_LINK_MAX       65000u

/* superblock state */
#define SUFS_STATE_CLEAN    1u    /* unmounted cleanly: nothing pending was lost */
/* superblock flags */
#define SUFS_FLAG_NEEDS_FSCK 0x1u /* a full check is required (set by fsck -b, errors) */
#define SUFS_FLAG_INCOMPLETE 0x2u /* never on disk with the real magic: see sufs_mkfs() */

/*
 * Feature bits (man/sufs.5 says which tools need which).  An image with a
 * bit of features_incompat this library does not know is refused; one with
 * an unknown bit of features_ro_compat is opened read-only only
 * (-SUFS_EROFEATURE for writing).
 */
#define SUFS_FEATURE_RO_XATTR   0x1u  /* extended attributes: inode bytes 216-251,
                                         attribute blocks */
#define SUFS_FEATURE_COMPAT_KNOWN    0u
#define SUFS_FEATURE_INCOMPAT_KNOWN  0u
#define SUFS_FEATURE_RO_COMPAT_KNOWN SUFS_FEATURE_RO_XATTR

/* write modes, recorded in the superblock (the mode an image was last written in) */
enum sufs_mode {
	SUFS_MODE_SOFTDEP = 0,
	SUFS_MODE_SYNC = 1,
	SUFS_MODE_ASYNC = 2,
};
const char *sufs_mode_name(unsigned mode);
int sufs_mode_parse(const char *name, unsigned *mode);

/* directory entry file types (as ext2) */
enum sufs_ftype {
	SUFS_FT_UNKNOWN = 0,
	SUFS_FT_REG = 1,
	SUFS_FT_DIR = 2,
	SUFS_FT_CHR = 3,
	SUFS_FT_BLK = 4,
	SUFS_FT_FIFO = 5,
	SUFS_FT_SOCK = 6,
	SUFS_FT_LNK = 7,
	SUFS_FT_MAX
};
unsigned sufs_ftype_of_mode(uint32_t mode);

/*
 * Extended attributes (SUFS_FEATURE_RO_XATTR; man/sufs.5).  A file's
 * attributes are all in one place: in its inode's SUFS_XATTR_INLINE bytes
 * when they fit there, else in one attribute block of its own.  Both hold
 * the same entries, sorted by namespace then name: a 4-byte header (u8
 * namespace, u8 name length, u16 value length), the name without its
 * prefix, the value, zeros up to a multiple of 4.
 */
#define SUFS_XATTR_INLINE    28u  /* attribute bytes in an inode */
#define SUFS_XATTR_MAGIC     0x52544158u /* "XATR": an attribute block */
#define SUFS_XATTR_BLOCK_HDR 16u  /* magic, reference count, 8 reserved bytes */
#define SUFS_XATTR_ENTRY_HDR 4u
#define SUFS_XATTR_NAME_MAX  255u   /* a whole name, its prefix included (Linux's) */
#define SUFS_XATTR_SIZE_MAX  65536u /* a value (Linux's XATTR_SIZE_MAX) */
#define SUFS_XATTR_LIST_MAX  65536u /* a list of names (XATTR_LIST_MAX) */

/* the namespaces, as stored (the numbers ext4 uses) */
enum sufs_xattr_ns {
	SUFS_XATTR_USER = 1,         /* "user." */
	SUFS_XATTR_ACL_ACCESS = 2,   /* "system.posix_acl_access" (the whole name) */
	SUFS_XATTR_ACL_DEFAULT = 3,  /* "system.posix_acl_default" */
	SUFS_XATTR_TRUSTED = 4,      /* "trusted." */
	SUFS_XATTR_SECURITY = 6,     /* "security." */
};
/* The prefix of a namespace ("user.", or the whole name of an ACL), or NULL. */
const char *sufs_xattr_prefix(unsigned ns);

/* One entry as stored: name is the part after the prefix (empty for an
 * ACL), neither it nor the value NUL-terminated. */
struct sufs_xattr {
	unsigned ns;
	uint32_t name_len;
	const char *name;
	uint32_t value_len;
	const uint8_t *value;
};
/*
 * Check an attribute area: an inode's SUFS_XATTR_INLINE bytes, or an
 * attribute block's bytes from SUFS_XATTR_BLOCK_HDR to its checksum (the
 * last 4 bytes).  Every entry within the area, of a known namespace, with
 * a name of the right length holding no NUL, its padding zero, in order
 * and no two alike, an ACL's value a valid ACL; after the last, zeros.
 * 0, or -SUFS_ECORRUPT with *why (if not NULL) and *bad (if not NULL) the
 * offset of the first bad entry.
 */
int sufs_xattr_check(const void *area, size_t len, const char **why, size_t *bad);
/* Call fn for each entry of an area that passed sufs_xattr_check(), in
 * order; fn's nonzero stops the walk and is returned. */
typedef int (*sufs_xattr_fn)(void *arg, const struct sufs_xattr *x);
int sufs_xattr_walk(const void *area, size_t len, sufs_xattr_fn fn, void *arg);
/* An attribute block's checksum: CRC-32 of the block number (u64) then
 * bytes 0 to block_size-5; seal writes it at block_size-4. */
uint32_t sufs_xattr_csum(const void *raw, uint32_t block_size, uint64_t blk);
void sufs_xattr_seal(void *raw, uint32_t block_size, uint64_t blk);
/* Is value (len bytes) a POSIX ACL in Linux's xattr form (version 2;
 * entries of tag, permissions, id, sorted, as acl(5) requires)?  0, or
 * -EINVAL with *why (if not NULL). */
int sufs_acl_check(const void *value, size_t len, const char **why);

/* inode flags */
#define SUFS_IFLAG_SNAPSHOT 0x1u  /* a snapshot file (the superblock's slots decide) */

#define SUFS_SNAP_BROKEN    0x1u  /* slot flag: a copy could not be made (no room); the
                                     snapshot is no longer a true view, only deletable */

struct sufs_snap_slot {
	uint32_t ino;     /* the snapshot file, 0 if the slot is free */
	uint32_t flags;   /* SUFS_SNAP_* */
	int64_t time;     /* when it was taken (seconds) */
};

/* The superblock, decoded. */
struct sufs_super {
	uint32_t magic;
	uint32_t version;
	uint32_t block_size;
	uint32_t inode_size;
	uint64_t blocks_count;
	uint64_t free_blocks;      /* summary: written unordered, fsck fixes */
	uint32_t inodes_count;
	uint32_t free_inodes;      /* summary */
	uint32_t blocks_per_group;
	uint32_t inodes_per_group;
	uint32_t groups_count;
	uint32_t gdt_blocks;
	uint32_t root_ino;
	uint32_t first_ino;
	uint32_t state;
	uint32_t flags;
	uint32_t write_mode;
	uint32_t mount_count;
	int64_t mkfs_time;
	int64_t mount_time;
	int64_t write_time;
	int64_t check_time;
	uint8_t uuid[16];
	char label[64];            /* NUL-padded, not necessarily NUL-terminated */
	uint32_t sb_group;         /* the group this copy lives in (0: primary) */
	uint32_t features_compat;
	uint32_t features_incompat;
	uint32_t features_ro_compat;
	uint32_t check_result;     /* result of the last check (fsck exit code) */
	uint32_t default_mode;     /* the write mode programs use unless told one
	                              (enum sufs_mode; sufs-tune -o sets it) */
	struct sufs_snap_slot snap[SUFS_SNAP_SLOTS];
	uint32_t checksum;
};

/* A group descriptor, decoded.  The locations are redundant (they follow
 * from the geometry) and are checked against it. */
struct sufs_group {
	uint32_t free_blocks;      /* summary */
	uint32_t free_inodes;      /* summary */
	uint32_t used_dirs;        /* summary */
	uint32_t flags;
	uint64_t block_bitmap;
	uint64_t inode_bitmap;
	uint64_t inode_table;
	uint32_t checksum;
};

/* An inode, decoded. */
struct sufs_inode {
	uint16_t mode;             /* S_IFMT type bits and permissions */
	uint16_t flags;
	uint32_t links;
	uint32_t uid;
	uint32_t gid;
	uint64_t size;
	uint64_t blocks;           /* file-system blocks mapped, indirect ones included */
	int64_t atime, mtime, ctime, crtime;
	uint32_t atime_ns, mtime_ns, ctime_ns, crtime_ns;
	uint32_t generation;
	uint32_t rdev_major;
	uint32_t rdev_minor;
	uint64_t block[SUFS_NBLOCKS]; /* or the fast symlink's target */
	uint64_t xattr_block;      /* its attribute block, or 0 (SUFS_FEATURE_RO_XATTR) */
	uint8_t xattr[SUFS_XATTR_INLINE]; /* the attributes it holds itself */
	uint32_t checksum;
};

/* Byte order and checksums: encode and decode the on-disk records.  The
 * *_csum functions compute the checksum the record should carry. */
void sufs_super_decode(const void *raw, struct sufs_super *sb);
void sufs_super_encode(const struct sufs_super *sb, void *raw); /* sets checksum */
uint32_t sufs_super_csum(const void *raw);
void sufs_group_decode(const void *raw, struct sufs_group *gd);
void sufs_group_encode(const struct sufs_group *gd, uint32_t group, void *raw);
uint32_t sufs_group_csum(const void *raw, uint32_t group);
void sufs_inode_decode(const void *raw, struct sufs_inode *in);
void sufs_inode_encode(const struct sufs_inode *in, uint32_t ino, void *raw);
uint32_t sufs_inode_csum(const void *raw, uint32_t ino);
int sufs_inode_is_zero(const void *raw);  /* never initialised: no checksum */
uint32_t sufs_dirblock_csum(const void *raw, uint32_t block_size, uint64_t blk);
void sufs_dirblock_seal(void *raw, uint32_t block_size, uint64_t blk);

/*
 * Check a decoded superblock for sanity: magic, version, block size, group
 * geometry and counts, all consistent with each other and, when
 * device_bytes is not 0, with the device size.  Returns 0 or -SUFS_E...;
 * *why (if not NULL) names the first bad field.
 */
int sufs_super_check(const struct sufs_super *sb, uint64_t device_bytes, const char **why);
/* The summary counts, which sufs_super_check() leaves to fsck.sufs (it
 * recounts them): no more free blocks and inodes than there are.  0, or
 * -SUFS_ECORRUPT with *why (if not NULL) naming the count. */
int sufs_super_check_counts(const struct sufs_super *sb, const char **why);
/*
 * Decode group's descriptor (raw, as on disk) into *gd and check it against
 * a sound superblock: its checksum, where its bitmaps and inode table are,
 * and its counts.  Returns 0, -SUFS_ECHECKSUM, or -SUFS_ECORRUPT with *why
 * (if not NULL) naming the first bad field.
 */
int sufs_group_check(const struct sufs_super *sb, uint32_t group, const void *raw,
		     struct sufs_group *gd, const char **why);

/* ------------------------------------------------------------------------ */
/* Geometry                                                                  */
/* ------------------------------------------------------------------------ */

/* Where everything of one group lies (block numbers). */
struct sufs_group_layout {
	uint64_t start;            /* first block of the group */
	uint64_t end;              /* one past its last block */
	uint64_t sb_block;         /* block with a superblock copy, or UINT64_MAX */
	uint64_t gdt_start;        /* group 0 only, else UINT64_MAX */
	uint32_t gdt_blocks;       /* group 0 only, else 0 */
	uint64_t block_bitmap;
	uint64_t inode_bitmap;
	uint64_t inode_table;
	uint32_t inode_table_blocks;
	uint64_t first_data;       /* first block after the group's metadata */
};
void sufs_group_layout(const struct sufs_super *sb, uint32_t group, struct sufs_group_layout *out);
int sufs_group_has_backup(uint32_t group);         /* 1 and powers of 3, 5 and 7 */
uint64_t sufs_group_overhead(const struct sufs_super *sb, uint32_t group);

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * A device is a table of functions over a byte-addressed store (all I/O is
 * in whole file-system blocks).  The image-file one reads and writes a file
 * or block device; others (a recording device, a snapshot view) wrap one.
 * barrier() makes every write before it durable before any write after it.
 */
struct sufs_dev;
struct sufs_dev_ops {
	int (*read)(struct sufs_dev *dev, uint64_t off, void *buf, size_t len);
	int (*write)(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len);
	int (*barrier)(struct sufs_dev *dev);
	int (*resize)(struct sufs_dev *dev, uint64_t bytes); /* may be NULL */
	void (*close)(struct sufs_dev *dev);
	/* a hint: those bytes will be read soon, start reading them now (may
	 * be NULL) */
	void (*prefetch)(struct sufs_dev *dev, uint64_t off, uint64_t len);
};
struct sufs_dev {
	const struct sufs_dev_ops *ops;
	uint64_t size;             /* bytes */
	int writable;
	int is_blockdev;
	char *name;
	void *priv;
	/* counters, kept by the sufs_dev_* wrappers */
	uint64_t reads, writes, barriers, bytes_read, bytes_written;
	int write_error;           /* the first failed write's or barrier's, or 0 */
};

#define SUFS_DEV_RDWR   0x1
#define SUFS_DEV_CREATE 0x2   /* create the file if it does not exist */
#define SUFS_DEV_EXCL   0x4   /* O_EXCL on a block device */
#define SUFS_DEV_DIRECT 0x8   /* aligned blocks with O_DIRECT, past the page cache
                                 (-EINVAL where the file system has none) */

int sufs_dev_open(const char *path, unsigned flags, struct sufs_dev **out);
int sufs_dev_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len);
int sufs_dev_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len);
int sufs_dev_barrier(struct sufs_dev *dev);
int sufs_dev_resize(struct sufs_dev *dev, uint64_t bytes);
void sufs_dev_close(struct sufs_dev *dev);
/* Start reading a byte range that will be read soon (a hint: nothing
 * happens where the device has no way to). */
void sufs_dev_prefetch(struct sufs_dev *dev, uint64_t off, uint64_t len);
/* Return a byte range of an image file to zeros (punch a hole, or
 * BLKZEROOUT, or write zeros). */
int sufs_dev_zero(struct sufs_dev *dev, uint64_t off, uint64_t len);

/*
 * Probe a device for an existing file system or partition table with
 * libblkid.  On return *what is NULL when nothing was found, else a
 * malloc()ed description such as "ext4 file system (label \"root\")",
 * "sufs file system", "sufs file system, its superblock damaged" (a sufs
 * file system that fsck.sufs could still repair counts) or
 * "dos partition table".
 */
int sufs_dev_probe(const char *path, char **what);

/* Parse "123", "64K", "10M", "2G", "16T" (powers of 1024) into bytes. */
int sufs_parse_size(const char *s, uint64_t *bytes);

/* ------------------------------------------------------------------------ */
/* Opening, creating and closing a file system                                */
/* ------------------------------------------------------------------------ */

struct sufs_fs;

#define SUFS_OPEN_RDWR        0x1
#define SUFS_OPEN_IGNORE_CSUM 0x2  /* open and read on even when checksums fail (superblock,
                                      groups, inodes, directory blocks); sufs_inode_get
                                      still reports a bad inode checksum */
#define SUFS_OPEN_NOFLAGS     0x4  /* do not mark the image unclean when opened for writing */

/* Open the image at path, from its primary superblock. */
int sufs_open(const char *path, unsigned flags, struct sufs_fs **out);
/* Open the file system on dev, which it then owns (sufs_close() closes it;
 * on failure it is left open for the caller).  sb_offset is the byte
 * offset of the superblock to use: 0 for the primary, else a backup's (see
 * sufs_backup_offset()). */
int sufs_open_dev(struct sufs_dev *dev, unsigned flags, uint64_t sb_offset,
		  struct sufs_fs **out);
/* Byte offset of the n-th backup superblock (n = 0, 1, ...) for the given
 * geometry; -ENOENT past the last. */
int sufs_backup_offset(const struct sufs_super *sb, unsigned n, uint64_t *off);

/* Write back everything, mark the image clean, close the device.  The fs is
 * freed even when this fails (the error is still returned).  -ENOMEM: all
 * was written, but memory ran out on the way and some writes may have gone
 * out of order; the image is marked as needing a full check. */
int sufs_close(struct sufs_fs *fs);
/* Drop everything in memory without writing (a simulated crash). */
void sufs_abandon(struct sufs_fs *fs);

const struct sufs_super *sufs_get_super(struct sufs_fs *fs);
struct sufs_dev *sufs_get_dev(struct sufs_fs *fs);
int sufs_get_group(struct sufs_fs *fs, uint32_t group, struct sufs_group *out);
/* Nonzero when the group's descriptor checksum failed at open time. */
int sufs_group_csum_bad(struct sufs_fs *fs, uint32_t group);

/* The clock used for new timestamps: real time unless fixed (reproducible
 * images: SOURCE_DATE_EPOCH).  Fixed right after an open for writing, it
 * dates that open too: the superblock's mount_time, and its write_time
 * when closed. */
void sufs_set_clock(struct sufs_fs *fs, int64_t sec, uint32_t nsec);

/*
 * Option structures (sufs_mkfs_opts, sufs_check_opts) may gain members in
 * later releases, at their end.  Each starts with its size as the program
 * was compiled: set it with the ..._INIT initialiser or the ..._init()
 * function (which zero the rest, and every zero member means its default),
 * and a library newer than the program then reads only the members the
 * program knows of, the newer ones at their defaults.  A size of 0 is read
 * as the members of release 0.1 (those below), so that a program which
 * zeroes the structure itself keeps working.
 */
struct sufs_mkfs_opts {
	uint32_t size;             /* sizeof(struct sufs_mkfs_opts), or 0 */
	uint32_t block_size;       /* 0: default */
	uint64_t bytes_per_inode;  /* 0: default (16384) */
	uint32_t inodes;           /* 0: from bytes_per_inode */
	uint32_t blocks_per_group; /* 0: 8 * block_size */
	char label[64];
	uint8_t uuid[16];
	int have_uuid;             /* else random, or derived from the time when
	                              the clock is fixed */
	uint32_t root_uid, root_gid;
	uint16_t root_mode;        /* 0: 0755 */
	int no_xattr;              /* leave SUFS_FEATURE_RO_XATTR clear (it is set
	                              by default) */
	int fixed_time;            /* use time_sec/time_nsec for every timestamp */
	int64_t time_sec;
	uint32_t time_nsec;
};
#define SUFS_MKFS_OPTS_INIT { .size = sizeof(struct sufs_mkfs_opts) }
static inline void sufs_mkfs_opts_init(struct sufs_mkfs_opts *o)
{
	unsigned char *p = (unsigned char *)o;
	size_t i;

	for (i = 0; i < sizeof(*o); i++)
		p[i] = 0;
	o->size = sizeof(*o);
}

/* Compute the layout mkfs would make on a device of `bytes` bytes, without
 * writing anything. */
int sufs_mkfs_layout(uint64_t bytes, const struct sufs_mkfs_opts *opts, struct sufs_super *out);

/*
 * Format the device and return it open for writing, with an empty root
 * directory.  Nothing on the device claims to be a sufs file system until
 * sufs_close() succeeds: the primary superblock's magic is written last,
 * after every other block and a barrier.  Until then the fs is usable like
 * any other (mkfs -d populates it through the normal operations).
 */
int sufs_mkfs(struct sufs_dev *dev, const struct sufs_mkfs_opts *opts, struct sufs_fs **out);

/* ------------------------------------------------------------------------ */
/* Inodes, blocks and bitmaps (read side, for tools)                          */
/* ------------------------------------------------------------------------ */

/* Read an inode as it stands in memory.  Returns -SUFS_ECHECKSUM (with *out
 * filled anyway) when its checksum fails, -EINVAL for an inode number out of
 * range. */
int sufs_inode_get(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *out);
/* Replace an inode wholesale (debugger and fsck; operations use the ops). */
int sufs_inode_put(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in);

enum sufs_bitmap { SUFS_BITMAP_BLOCK, SUFS_BITMAP_INODE };
int sufs_bitmap_test(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n, int *set);
int sufs_bitmap_set(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n, int set);

/* Map a file's logical block to its physical block (0: a hole). */
int sufs_bmap(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t *pblk);

/*
 * Visit every block an inode maps: data blocks with level 0 and their
 * logical number, indirect blocks with level 1..3 (lblk is then the first
 * logical block they map).  Pointers out of range are reported with
 * *bad set and not followed.  A callback returning nonzero stops the walk
 * and that value is returned.
 */
typedef int (*sufs_block_fn)(struct sufs_fs *fs, uint32_t ino, uint64_t lblk,
			     uint64_t pblk, int level, int bad, void *arg);
int sufs_block_iterate(struct sufs_fs *fs, uint32_t ino, sufs_block_fn fn, void *arg);

/* Raw block access through the cache (tools). */
int sufs_block_read(struct sufs_fs *fs, uint64_t blk, void *buf);
int sufs_block_write(struct sufs_fs *fs, uint64_t blk, const void *buf);

/* ------------------------------------------------------------------------ */
/* File-system operations                                                     */
/* ------------------------------------------------------------------------ */

struct sufs_stat {
	uint32_t ino;
	uint32_t mode;
	uint32_t links;
	uint32_t uid, gid;
	uint64_t size;
	uint64_t blocks;           /* file-system blocks */
	int64_t atime, mtime, ctime, crtime;
	uint32_t atime_ns, mtime_ns, ctime_ns, crtime_ns;
	uint32_t rdev_major, rdev_minor;
	uint32_t generation;
};

int sufs_stat(struct sufs_fs *fs, uint32_t ino, struct sufs_stat *st);
int sufs_lookup(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino);

/*
 * Resolve a path.  Relative paths start at cwd.  Symlinks in the middle of
 * the path are followed (at most 40); the last component's symlink only if
 * follow is set.  "/.." is "/".
 */
int sufs_namei(struct sufs_fs *fs, uint32_t cwd, const char *path, int follow, uint32_t *ino);
/* Split a path into the directory that holds its last component (resolved)
 * and that component; *name points into path.  A path of slashes only is
 * the root and ".", so that the operations answer for "/" as for the
 * root: EEXIST to make it, EISDIR to unlink it, EBUSY to remove or rename
 * it.  A path of SUFS_PATH_MAX bytes or more: -ENAMETOOLONG. */
int sufs_namei_parent(struct sufs_fs *fs, uint32_t cwd, const char *path,
		      uint32_t *dir, const char **name, size_t *len);

int sufs_read(struct sufs_fs *fs, uint32_t ino, uint64_t off, void *buf, size_t len,
	      size_t *done);
int sufs_readlink(struct sufs_fs *fs, uint32_t ino, char *buf, size_t size, size_t *len);

/* Entries in on-disk order, "." and ".." included.  A callback returning
 * nonzero stops the walk and that value is returned. */
typedef int (*sufs_dirent_fn)(void *arg, const char *name, size_t len, uint32_t ino,
			      unsigned ftype);
int sufs_readdir(struct sufs_fs *fs, uint32_t dir, sufs_dirent_fn fn, void *arg);

struct sufs_cred {
	uint32_t uid, gid;
};

int sufs_create(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
		uint32_t mode, const struct sufs_cred *cred, uint32_t *ino);
int sufs_mknod(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
	       uint32_t mode, uint32_t major, uint32_t minor,
	       const struct sufs_cred *cred, uint32_t *ino);
int sufs_mkdir(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
	       uint32_t mode, const struct sufs_cred *cred, uint32_t *ino);
int sufs_symlink(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
		 const char *target, const struct sufs_cred *cred, uint32_t *ino);
int sufs_link(struct sufs_fs *fs, uint32_t ino, uint32_t dir, const char *name, size_t len);
/* Write len bytes at off, allocating blocks as needed (holes stay holes
 * where nothing is written). */
int sufs_write(struct sufs_fs *fs, uint32_t ino, uint64_t off, const void *buf, size_t len);

#define SUFS_SET_MODE  0x01
#define SUFS_SET_UID   0x02
#define SUFS_SET_GID   0x04
#define SUFS_SET_SIZE  0x08   /* truncate: grow (a hole) or shrink (blocks freed) */
#define SUFS_SET_ATIME 0x10
#define SUFS_SET_MTIME 0x20
#define SUFS_SET_CTIME 0x40
struct sufs_setattr {
	unsigned mask;
	uint32_t mode;             /* permission bits only */
	uint32_t uid, gid;
	uint64_t size;
	int64_t atime, mtime, ctime;
	uint32_t atime_ns, mtime_ns, ctime_ns;
};
int sufs_setattr(struct sufs_fs *fs, uint32_t ino, const struct sufs_setattr *sa);

/*
 * Extended attributes, as Linux's getxattr(2), setxattr(2), listxattr(2)
 * and removexattr(2) on the file itself (symbolic links are not
 * followed: name one's target).  A name is "user.NAME", "trusted.NAME",
 * "security.NAME", "system.posix_acl_access" or "system.posix_acl_default"
 * (a NUL-terminated string): -EOPNOTSUPP for any other namespace, and on
 * an image without SUFS_FEATURE_RO_XATTR; -ERANGE for a name that is
 * empty or longer than SUFS_XATTR_NAME_MAX; -EINVAL for a prefix with
 * nothing after it.  cred is the caller, privileged when NULL or uid 0:
 * trusted. needs it (-EPERM to change, -ENODATA to read, and left out of
 * lists, as Linux answers without CAP_SYS_ADMIN), and so does changing
 * an ACL, or a user. attribute of a sticky directory, of a file the
 * caller does not own (-EPERM).  user. attributes belong to regular files
 * and directories only (-EPERM to change, -ENODATA to read on others).
 * Permission bits are not checked: sufs-fuse leaves that to the kernel.
 *
 * ACLs are checked (-EINVAL for a malformed one) and keep the mode in
 * step: setting system.posix_acl_access sets the permission bits from it,
 * and an ACL the bits say all of is stored as the bits alone; a default
 * ACL is for directories (-EACCES); sufs_setattr() with SUFS_SET_MODE
 * changes the access ACL's owner, mask (or group) and other entries.
 */
#define SUFS_XATTR_CREATE  0x1  /* -EEXIST if it exists (XATTR_CREATE) */
#define SUFS_XATTR_REPLACE 0x2  /* -ENODATA if it does not (XATTR_REPLACE) */
/* The value of name into value (size bytes): its length in *len.  With
 * size 0 only *len is set; -ERANGE when size is less than the length,
 * -ENODATA when the file has no such attribute. */
int sufs_getxattr(struct sufs_fs *fs, uint32_t ino, const char *name, void *value,
		  size_t size, size_t *len, const struct sufs_cred *cred);
/* Set name to the size bytes of value (a value of 0 bytes is one):
 * -E2BIG past SUFS_XATTR_SIZE_MAX, -ENOSPC when the file's attributes
 * would not fit in a block, or no block is free. */
int sufs_setxattr(struct sufs_fs *fs, uint32_t ino, const char *name, const void *value,
		  size_t size, int flags, const struct sufs_cred *cred);
/* The names, each with its prefix and a NUL, into list (size bytes), as
 * getxattr's sizes: *len, -ERANGE; -E2BIG when even SUFS_XATTR_LIST_MAX
 * bytes or more are too few. */
int sufs_listxattr(struct sufs_fs *fs, uint32_t ino, char *list, size_t size, size_t *len,
		   const struct sufs_cred *cred);
/* Remove name: -ENODATA when there is none. */
int sufs_removexattr(struct sufs_fs *fs, uint32_t ino, const char *name,
		     const struct sufs_cred *cred);
/*
 * Default ACLs, as Linux's own file systems give them at create, mkdir and
 * mknod (acl(5)), in two calls around the one that makes the file.
 * sufs_acl_create_mode(): the mode to make a file of mode in dir with:
 * mode itself when dir has no default ACL (*has_default 0: the caller
 * applies its umask instead, as sufs-fuse does with the kernel's POSIX
 * ACLs), else mode cut to what the default ACL's owner, owning group and
 * other entries grant, so that until the next call the file grants no
 * more than its ACL will.  sufs_acl_inherit(), once ino (asked for with
 * mode) is made in dir: its access ACL is dir's default ACL with the
 * owner, mask (or group) and other entries cut to mode, and its mode
 * bits follow; a directory also keeps the default ACL as its own.
 * *inherited is 1 if dir had one, else 0 and nothing changes.  Symbolic
 * links take none.
 */
int sufs_acl_create_mode(struct sufs_fs *fs, uint32_t dir, uint32_t mode, uint32_t *out,
			 int *has_default);
int sufs_acl_inherit(struct sufs_fs *fs, uint32_t dir, uint32_t ino, uint32_t mode,
		     int *inherited);

/* Bound the buffer cache (default 64 MiB; at least 64 blocks).  Dirty blocks
 * are written back once half of it is dirty. */
void sufs_set_cache_size(struct sufs_fs *fs, size_t bytes);

/* Remove a name; the inode goes when its last name does.  Not directories. */
int sufs_unlink(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len);
/* Remove an empty directory. */
int sufs_rmdir(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len);
/*
 * Rename, in one directory or across directories, over an existing file or
 * empty directory (which goes), moving a directory (its ".." follows).
 * -EINVAL when a directory would move into itself.
 */
int sufs_rename(struct sufs_fs *fs, uint32_t sdir, const char *sname, size_t slen,
		uint32_t ddir, const char *dname, size_t dlen);
/* Truncate (grow or shrink) to size. */
int sufs_truncate(struct sufs_fs *fs, uint32_t ino, uint64_t size);
/* Punch a hole: bytes [off, off + len) read as zeros, the blocks wholly
 * inside are freed, the size stays (fallocate's PUNCH_HOLE | KEEP_SIZE).
 * Regular files only (-EISDIR, -EINVAL). */
int sufs_punch(struct sufs_fs *fs, uint32_t ino, uint64_t off, uint64_t len);

/*
 * Files held open.  A file held keeps its inode and blocks after its last
 * name goes (its link count is then 0), as a Unix process keeps a file it
 * has open, until its last hold is released; sufs_close() releases what is
 * still held.  A crash leaves such a file as a leak, which fsck.sufs and
 * the background check free.  The background check never frees a file
 * held.  Holds are counted; sufs_release() of an inode not held: -EINVAL.
 */
int sufs_hold(struct sufs_fs *fs, uint32_t ino);
int sufs_release(struct sufs_fs *fs, uint32_t ino);

/* Make the file's data, its inode and the names that reach it from the root
 * durable, writing no block that does not carry part of that. */
int sufs_fsync(struct sufs_fs *fs, uint32_t ino);
/* Write back everything that is pending, in as many epochs as the
 * dependencies need.  -ENOMEM: as for sufs_close(), all was written, but
 * not always in order since memory ran out (the image says so). */
int sufs_sync(struct sufs_fs *fs);

/*
 * The write mode (enum sufs_mode): the same operations, another write-back
 * policy.  softdep: lazy, ordered by the dependency engine; sync: every
 * ordered update is written (and barriered) before the operation returns;
 * async: no ordering at all, a barrier only at sync.  Recorded in the
 * superblock.  Set it right after opening.
 */
int sufs_set_mode(struct sufs_fs *fs, unsigned mode);
/* Write back when more than this share of the cache is dirty (percent,
 * default 50) or when the oldest change is older than max_age_ms (default
 * 30000; 0: never by age). */
void sufs_set_writeback(struct sufs_fs *fs, unsigned dirty_percent, unsigned max_age_ms);
/* Write back what that policy says is due now.  The policy is otherwise
 * applied at the end of each operation; a program that keeps a file system
 * open while no operation comes (sufs-fuse) calls this from a timer. */
int sufs_writeback_due(struct sufs_fs *fs);

/* Counters for --stats and the debugger. */
struct sufs_stats {
	uint64_t block_reads, block_writes, barriers;
	uint64_t cache_blocks, cache_bytes, dirty_blocks;
	uint64_t epochs;           /* epochs written (a set of writes and a barrier) */
	uint64_t updates;          /* updates created */
	uint64_t merged;           /* changes folded into a pending update */
	uint64_t undone;           /* updates undone in write images */
	uint64_t pending;          /* updates pending now */
	uint64_t peak_pending;
	uint64_t dep_bytes;        /* dependency memory now: records, edges, undo bytes */
	uint64_t peak_dep_bytes;
	uint64_t undo_bytes;       /* old bytes kept now */
	uint64_t peak_undo_bytes;
	uint64_t deferred;         /* deferred work items waiting */
	uint64_t forgotten;        /* files removed before they reached the disk, whose
	                              pending updates (their data) were forgotten */
	uint64_t moves_settled;    /* directories renamed again before their last
	                              rename was on disk: that one written first */
	uint64_t waits;            /* waits made between updates */
};
void sufs_get_stats(struct sufs_fs *fs, struct sufs_stats *st);

/* ------------------------------------------------------------------------ */
/* The dependency engine as tools see it (sufs-debug's deps, why, flush)       */
/* ------------------------------------------------------------------------ */

/* What becomes of a pending update in a write of its block. */
enum sufs_dep_state {
	SUFS_DEP_READY,   /* the next write of its block carries it */
	SUFS_DEP_BLOCKED, /* the next write undoes it: it waits for something
	                     not yet on disk */
	SUFS_DEP_WRITTEN, /* (flush) the write just made carries it: on disk
	                     once the epoch's barrier has passed */
	SUFS_DEP_UNDONE,  /* (flush) the write just made undid it: still pending */
};

/* One pending update: a change of a byte range of one block. */
struct sufs_dep {
	uint64_t id;               /* an update waits only for lower ids */
	const char *kind;          /* the 1999 paper's names: "bmsafemap", "inodedep",
	                              "allocdirect", "indirdep", "allocindir", "diradd",
	                              "mkdir", "dirrem", "freeblks", "freefile";
	                              "data" for file contents; "copyonwrite": a
	                              block's old contents, kept until a snapshot's
	                              copy of them is on disk; "extattr": extended
	                              attributes, in an inode or a block */
	uint32_t off, len;         /* the bytes of the block it changes */
	unsigned state;            /* enum sufs_dep_state */
	uint32_t undo_bytes;       /* old bytes kept to undo it (0: never undone, or
	                              the old bytes were zeros, see undoable) */
	int undoable;              /* it may be left out of a write image */
	int32_t delta;             /* a change of a counter (a link count) that may
	                              be undone: by subtracting this; else 0 */
	unsigned nwaits;
	const uint64_t *waits;     /* the ids it waits for, ascending */
};

/* A block with pending updates, as reported to a sufs_deps_fn. */
struct sufs_dep_block {
	uint64_t blk;
	const char *type;          /* "inode table", "directory", "bitmap",
	                              "indirect", "attribute", "data" or "raw" */
	int plain;                 /* it also has changes outside the ordering
	                              (timestamps, summary counts) */
	size_t ndeps;
	const struct sufs_dep *deps; /* its pending updates, oldest first */
};
/* Called per block; the records live only during the call.  Nonzero stops
 * a walk and is returned. */
typedef int (*sufs_deps_fn)(void *arg, const struct sufs_dep_block *b);

#define SUFS_DEPS_ALL UINT64_MAX

/*
 * Visit the dirty blocks of the cache in block order (blk == SUFS_DEPS_ALL)
 * or the one block blk, with their pending updates and whether the next
 * write of each would carry or undo it (READY or BLOCKED).  A block that is
 * not dirty is not visited.  Nothing is written.
 */
int sufs_deps_walk(struct sufs_fs *fs, uint64_t blk, sufs_deps_fn fn, void *arg);

/*
 * Write one epoch: the write image of every dirty block that has something
 * it may write, then a barrier (none in async mode), then what went out is
 * on disk and deferred work that became ready runs.  fn (may be NULL) is
 * called for each block as it is written, before the barrier, with each of
 * its updates WRITTEN or UNDONE; its return value is ignored.  Returns the
 * number of blocks written (0: nothing was dirty), or a negative error.
 */
int sufs_deps_flush(struct sufs_fs *fs, sufs_deps_fn fn, void *arg);

/* The version of the library running, e.g. "0.1.0" (SUFS_LIB_VERSION is
 * the one of the header a program was compiled with). */
const char *sufs_version(void);

/* ------------------------------------------------------------------------ */
/* Snapshots (snap.c)                                                          */
/* ------------------------------------------------------------------------ */

/*
 * A snapshot is a file /.snap/NAME as large as the file system, sparse,
 * named in a superblock slot.  Its block n holds the contents block n had
 * when it was taken, once block n has been overwritten or freed since;
 * until then block n is read from the live file system.  Snapshot files
 * read as empty in every snapshot.  While an image has snapshots, only this
 * library (not a tool writing raw blocks) may change it.
 */
struct sufs_snap_info {
	char name[SUFS_NAME_MAX + 1];
	unsigned slot;
	uint32_t ino;
	int64_t time;              /* when it was taken (seconds since the epoch) */
	uint64_t blocks;           /* blocks it holds: copies, claimed blocks and
	                              its indirect blocks (what deleting it frees,
	                              less what an older snapshot inherits) */
	int broken;                /* SUFS_SNAP_BROKEN: only deletable */
};

/*
 * Take a snapshot: write everything back, create /.snap/NAME, freeze the
 * file system's state as it now stands into it, and record it in a free
 * slot.  A crash before the end leaves no snapshot (at most a file under
 * /.snap that is not one).  -EEXIST when the name is taken, -SUFS_ENOSLOT
 * when every slot is, -ENOSPC when there is no room, -EINVAL for a name
 * that is not a single path component.
 */
int sufs_snap_create(struct sufs_fs *fs, const char *name, struct sufs_snap_info *out);
/* The snapshots, oldest first: *n of them (at most SUFS_SNAP_SLOTS). */
int sufs_snap_list(struct sufs_fs *fs, struct sufs_snap_info out[SUFS_SNAP_SLOTS], unsigned *n);
/* One snapshot by name; -SUFS_ENOTSNAP when there is none. */
int sufs_snap_find(struct sufs_fs *fs, const char *name, struct sufs_snap_info *out);
/* Delete a snapshot: free the blocks it alone holds, hand the blocks it
 * claimed to another snapshot that needs them, remove its file and slot. */
int sufs_snap_delete(struct sufs_fs *fs, const char *name);
/*
 * The snapshot as a read-only device: open it with sufs_open_dev() (or
 * check it, export it) like an image.  Reads come from the snapshot's
 * copies and, for blocks not yet copied, from the live file system, which
 * must stay open until the device is closed.  A second thread may read it
 * while the first changes the file system under sufs_lock().
 */
int sufs_snap_open_dev(struct sufs_fs *fs, const char *name, struct sufs_dev **out);
/* Whether block blk of the snapshot's view is in use there (blocks free in
 * the view need not be exported). */
int sufs_snap_block_used(struct sufs_dev *view, uint64_t blk, int *used);

/*
 * For two threads on one file system (a background check): the one that
 * changes it holds this lock around each operation; snapshot views take it
 * for each read.
 */
void sufs_lock(struct sufs_fs *fs);
void sufs_unlock(struct sufs_fs *fs);

/* ------------------------------------------------------------------------ */
/* Checking and repair (check/)                                               */
/* ------------------------------------------------------------------------ */

/*
 * Every inconsistency the checker knows is a row of one table (check/problems.c):
 * a code, a message template, flags and the question it asks.  One function
 * decides, for every problem alike, whether it is fixed: by -n, -y, -p,
 * leak-only, the background check or an interactive answer.
 */
#define SUFS_PR_PREEN_OK 0x1   /* preen (-p) may fix it without asking */
#define SUFS_PR_LEAK     0x2   /* a leak: all a crash under soft updates may leave */
#define SUFS_PR_NO       0x4   /* the default answer (interactive) is no */

enum sufs_problem_code {
	/* pass 0: superblock and group descriptors */
	SUFS_PR_SB_PRIMARY_BAD     = 0x0001,
	SUFS_PR_GROUP_DESC_BAD     = 0x0002,
	SUFS_PR_SNAP_SLOT_BAD      = 0x0003,
	SUFS_PR_SB_FIELD           = 0x0004,
	SUFS_PR_SB_CSUM            = 0x0005,
	SUFS_PR_SNAP_SLOT_DUP      = 0x0006,
	SUFS_PR_SNAP_UNREADABLE    = 0x0007,
	SUFS_PR_SB_CHOSEN          = 0x0008,
	/* pass 1: inodes and block maps */
	SUFS_PR_RESERVED_INODE     = 0x0101,
	SUFS_PR_INODE_ZERO_MODE    = 0x0102,
	SUFS_PR_INODE_BAD_MODE     = 0x0103,
	SUFS_PR_INODE_CSUM         = 0x0104,
	SUFS_PR_BAD_BLOCK          = 0x0105,
	SUFS_PR_BLOCK_PAST_SIZE    = 0x0106,
	SUFS_PR_BLOCKS_COUNT       = 0x0107,
	SUFS_PR_BAD_SYMLINK        = 0x0108,
	SUFS_PR_SPECIAL_DATA       = 0x0109,
	SUFS_PR_DIR_SIZE           = 0x010a,
	SUFS_PR_DIR_NO_BLOCKS      = 0x010b,
	SUFS_PR_TOO_MANY_BLOCKS    = 0x010c,
	SUFS_PR_ROOT_NOT_DIR       = 0x010d,
	SUFS_PR_DIR_SIZE_PAST_END  = 0x010e,
	SUFS_PR_FILE_SIZE_PAST_MAX = 0x010f,
	SUFS_PR_PAST_SIZE_FREE     = 0x0110,
	SUFS_PR_PAST_SIZE_CLAIMED  = 0x0111,
	SUFS_PR_XATTR_INLINE       = 0x0112,
	SUFS_PR_XATTR_BAD_BLOCK    = 0x0113,
	SUFS_PR_XATTR_BLOCK_CORRUPT = 0x0114,
	SUFS_PR_XATTR_CSUM         = 0x0115,
	SUFS_PR_XATTR_REFCOUNT     = 0x0116,
	/* pass 1b: blocks claimed twice */
	SUFS_PR_DUP_BLOCK          = 0x0151,
	SUFS_PR_DUP_CLEAR          = 0x0152,
	SUFS_PR_XATTR_DUP          = 0x0153,
	/* pass 2: directories */
	SUFS_PR_DIR_HOLE           = 0x0201,
	SUFS_PR_DIR_BLOCK_CORRUPT  = 0x0202,
	SUFS_PR_DIR_CSUM           = 0x0203,
	SUFS_PR_NO_DOT             = 0x0204,
	SUFS_PR_BAD_DOT            = 0x0205,
	SUFS_PR_NO_DOTDOT          = 0x0206,
	SUFS_PR_ENTRY_BAD_NAME     = 0x0207,
	SUFS_PR_ENTRY_DOT          = 0x0208,
	SUFS_PR_ENTRY_BAD_INO      = 0x0209,
	SUFS_PR_ENTRY_ROOT         = 0x020a,
	SUFS_PR_ENTRY_FREE_INO     = 0x020b,
	SUFS_PR_ENTRY_DIR_LINK     = 0x020c,
	SUFS_PR_ENTRY_FTYPE        = 0x020d,
	SUFS_PR_DIR_STALE_NAME     = 0x020e,
	SUFS_PR_ENTRY_DUP          = 0x020f,
	SUFS_PR_ENTRY_DUP_NAME     = 0x0210,
	/* pass 3: connectivity */
	SUFS_PR_ROOT_MISSING       = 0x0301,
	SUFS_PR_DIR_UNREF_EMPTY    = 0x0302,
	SUFS_PR_DIR_UNREF          = 0x0303,
	SUFS_PR_DIR_LOOP           = 0x0304,
	SUFS_PR_BAD_DOTDOT         = 0x0305,
	SUFS_PR_LOST_FOUND_NOT_DIR = 0x0306,
	/* pass 4: reference counts */
	SUFS_PR_UNATTACHED_EMPTY   = 0x0401,
	SUFS_PR_UNATTACHED         = 0x0402,
	SUFS_PR_UNATTACHED_CLEAR   = 0x0403,
	SUFS_PR_LINKS_HIGH         = 0x0404,
	SUFS_PR_LINKS_LOW          = 0x0405,
	SUFS_PR_SNAP_ORPHAN        = 0x0406,
	SUFS_PR_SNAP_FLAG          = 0x0407,
	/* pass 5: bitmaps and summaries */
	SUFS_PR_BLOCKS_LEAKED      = 0x0501,
	SUFS_PR_BLOCKS_UNMARKED    = 0x0502,
	SUFS_PR_INODES_LEAKED      = 0x0503,
	SUFS_PR_INODES_UNMARKED    = 0x0504,
	SUFS_PR_BITMAP_PADDING     = 0x0505,
	SUFS_PR_GROUP_COUNTS       = 0x0506,
	SUFS_PR_SB_COUNTS          = 0x0507,
};

/* A row of the table. */
struct sufs_problem_def {
	unsigned code;
	const char *name;          /* short and stable, for scripts: "links_high" */
	unsigned pass;             /* 0-5; pass 1b is 1 */
	unsigned flags;            /* SUFS_PR_* */
	const char *prompt;        /* the question: "Fix", "Clear", "Clone", ... */
	const char *message;       /* the template (check/problems.c lists the
	                              placeholders) */
};
const struct sufs_problem_def *sufs_problem_def(unsigned code);
/* The whole table, in code order. */
const struct sufs_problem_def *sufs_problem_table(size_t *count);

/* One problem found, as reported to the caller. */
struct sufs_problem {
	const struct sufs_problem_def *def;
	char message[320];         /* the template filled in */
	uint32_t ino;              /* the inode concerned, or 0 */
	uint64_t blk;              /* the block concerned, or 0 */
	/* the other values the template may show (0 when it does not) */
	uint32_t ino2, dir;        /* the last of a run of inodes; a directory */
	uint64_t blk2;             /* the last of a run of blocks */
	uint64_t num, num2;        /* e.g. a link count found and the right one */
	char name[SUFS_NAME_MAX + 1]; /* an entry's name, or "" */
};

/* What the check may do (sufs_check_opts.flags). */
#define SUFS_CHECK_NO         0x01 /* -n: open read-only, answer no */
#define SUFS_CHECK_YES        0x02 /* -y: answer yes */
#define SUFS_CHECK_PREEN      0x04 /* -p: fix PREEN_OK problems, stop at any other */
#define SUFS_CHECK_LEAKS_ONLY 0x08 /* fix leaks only; anything worse: change nothing */
#define SUFS_CHECK_FORCE      0x10 /* check even a clean file system */

/* The outcome, as fsck(8) exit status bits (sufs_check_result.status). */
#define SUFS_EXIT_OK          0
#define SUFS_EXIT_CORRECTED   1
#define SUFS_EXIT_REBOOT      2    /* never set: there is nothing mounted to reboot */
#define SUFS_EXIT_UNCORRECTED 4
#define SUFS_EXIT_OPERROR     8
#define SUFS_EXIT_USAGE       16
#define SUFS_EXIT_CANCELLED   32
#define SUFS_EXIT_LIBERROR    128

/* Set up with SUFS_CHECK_OPTS_INIT or sufs_check_opts_init(), as
 * sufs_mkfs_opts. */
struct sufs_check_opts {
	uint32_t size;             /* sizeof(struct sufs_check_opts), or 0 */
	unsigned flags;            /* SUFS_CHECK_* */
	uint64_t sb_offset;        /* byte offset of the superblock to use; 0: the
	                              primary, or the first good backup if it is bad */
	/* Each is optional.  ask: the interactive answer (nonzero: fix), asked
	 * only when neither NO, YES nor PREEN is set; without it the answer is
	 * no.  report: every problem, once decided.  pass: a pass begins.
	 * progress: done out of total in the pass.  cancelled: polled often;
	 * nonzero stops the check cleanly (status bit 32). */
	int (*ask)(void *arg, const struct sufs_problem *p);
	void (*report)(void *arg, const struct sufs_problem *p, int fixed);
	void (*pass)(void *arg, unsigned pass, const char *name);
	void (*progress)(void *arg, unsigned pass, uint64_t done, uint64_t total);
	int (*cancelled)(void *arg);
	void *arg;
	/* background check only: read the snapshot at most this fast (KiB
	 * per second; 0: no limit), leaving the device to the workload */
	uint32_t throttle_kib;
};
#define SUFS_CHECK_OPTS_INIT { .size = sizeof(struct sufs_check_opts) }
static inline void sufs_check_opts_init(struct sufs_check_opts *o)
{
	unsigned char *p = (unsigned char *)o;
	size_t i;

	for (i = 0; i < sizeof(*o); i++)
		p[i] = 0;
	o->size = sizeof(*o);
}

struct sufs_check_result {
	int status;                /* SUFS_EXIT_* bits, as recorded in the superblock */
	int skipped;               /* clean and not forced: nothing was checked */
	int halted;                /* preen met a problem it may not fix, or leak-only
	                              one that is not a leak: see status */
	int modified;              /* something was written */
	uint64_t sb_offset;        /* the superblock used */
	unsigned problems, fixed, leaks, nonleaks;
	uint32_t inodes_count, inodes_used, dirs;
	uint64_t blocks_count, blocks_used;
	int error;                 /* with status bit 8 or 128: the error */
	const char *error_where;   /* and what was being done, or NULL */
};

/*
 * Check the file system on dev (not closed here) and repair it as the
 * options say.  Returns 0 when the check ran to its end (r->status says
 * what it found), or a negative error (r->status has bit 8 or 128).
 * Repairs leave a file system that a second check finds clean.
 */
int sufs_check_dev(struct sufs_dev *dev, const struct sufs_check_opts *o,
		   struct sufs_check_result *r);
/* The same on the image at path (opened read-only with SUFS_CHECK_NO). */
int sufs_check(const char *path, const struct sufs_check_opts *o, struct sufs_check_result *r);

/*
 * The background check (fsck.sufs -b) of a file system open for writing,
 * which another thread may go on changing under sufs_lock(): take a
 * snapshot; check its view, changing nothing there; then, under the lock,
 * apply to the live file system what was found: free a leaked block or
 * inode only if it is still allocated, lower a link count by the excess
 * found, fix the summaries; delete the snapshot; record the result in the
 * superblock.  Anything worse than a leak is reported, sets
 * SUFS_FLAG_NEEDS_FSCK and changes nothing else (status 4).  With
 * SUFS_CHECK_NO nothing is applied.  -SUFS_EBGREFUSED, before anything is
 * done, when the image was last written in another mode than softdep or is
 * flagged as needing a full check.
 */
int sufs_check_background(struct sufs_fs *fs, const struct sufs_check_opts *o,
			  struct sufs_check_result *r);

#ifdef __cplusplus
}
#endif
#endif /* SUFS_H */
