/*
 * format.h - where each field of each on-disk record lives: the one table
 * of offsets, owned by the format code (format.c encodes and decodes with
 * it; man/sufs.5 documents the same table).  Other files read decoded
 * structs (sufs.h), or, where they work on a record's bytes in a buffer
 * (directory entries, an inode's ordered parts, block pointers), take the
 * offsets from here: no file of libsufs writes an offset as a number.
 */
#ifndef SUFS_FORMAT_H
#define SUFS_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* ---- superblock (at byte SUFS_SB_OFFSET, SUFS_SB_SIZE bytes) --------------- */

#define SB_MAGIC        0
#define SB_VERSION      4
#define SB_BLOCK_SIZE   8
#define SB_INODE_SIZE   12
#define SB_BLOCKS       16
#define SB_FREE_BLOCKS  24
#define SB_INODES       32
#define SB_FREE_INODES  36
#define SB_BPG          40
#define SB_IPG          44
#define SB_GROUPS       48
#define SB_GDT_BLOCKS   52
#define SB_ROOT_INO     56
#define SB_FIRST_INO    60
#define SB_STATE        64
#define SB_FLAGS        68
#define SB_WRITE_MODE   72
#define SB_MOUNT_COUNT  76
#define SB_MKFS_TIME    80
#define SB_MOUNT_TIME   88
#define SB_WRITE_TIME   96
#define SB_CHECK_TIME   104
#define SB_UUID         112
#define SB_LABEL        128
#define SB_SB_GROUP     192
#define SB_FEAT_COMPAT  196
#define SB_FEAT_INCOMPAT 200
#define SB_FEAT_RO      204
#define SB_CHECK_RESULT 208
#define SB_DEFAULT_MODE 212
#define SB_SNAP         256   /* 20 slots of 32 bytes */
#define SB_SNAP_SIZE    32
#define SB_CSUM         1020

/* ---- group descriptor (SUFS_GROUP_DESC_SIZE bytes) ---------------------------- */

#define GD_FREE_BLOCKS  0
#define GD_FREE_INODES  4
#define GD_USED_DIRS    8
#define GD_FLAGS        12
#define GD_BLOCK_BITMAP 16
#define GD_INODE_BITMAP 24
#define GD_INODE_TABLE  32
#define GD_CSUM         60

/* ---- inode (SUFS_INODE_SIZE bytes) ------------------------------------------- */

#define IN_MODE       0
#define IN_FLAGS      2
#define IN_LINKS      4
#define IN_UID        8
#define IN_GID        12
#define IN_SIZE       16
#define IN_BLOCKS     24
#define IN_ATIME      32
#define IN_MTIME      40
#define IN_CTIME      48
#define IN_CRTIME     56
#define IN_ATIME_NS   64
#define IN_MTIME_NS   68
#define IN_CTIME_NS   72
#define IN_CRTIME_NS  76
#define IN_GENERATION 80
#define IN_RDEV_MAJOR 84
#define IN_RDEV_MINOR 88
#define IN_BLOCK      96   /* 15 x 8 bytes, or the fast symlink target */
#define IN_XATTR_BLOCK 216 /* the attribute block (SUFS_FEATURE_RO_XATTR) */
#define IN_XATTR      224  /* SUFS_XATTR_INLINE bytes of attributes */
#define IN_CSUM       252
#define IN_BLOCK_PTR(i) (IN_BLOCK + 8 * (i))

/* ---- indirect block: an array of 64-bit block pointers ------------------------ */

#define IND_PTR(i)    (8 * (i))

/* ---- directory entry, and a directory block's tail ----------------------------- */

#define DE_INO      0
#define DE_RECLEN   4
#define DE_NAMELEN  6
#define DE_FTYPE    7
#define DE_NAME     8
/* the tail, the block's last SUFS_DIR_TAIL_SIZE bytes */
#define DT_MAGIC    0
#define DT_CSUM     4
#define DIR_TAIL_MAGIC 0x4c494154u /* "TAIL" */

/* ---- attribute block, and an entry of an attribute area ------------------------ */

#define XB_MAGIC    0
#define XB_REFCOUNT 4
#define XB_ENTRIES  SUFS_XATTR_BLOCK_HDR  /* the area, to XB_CSUM(bsize) */
#define XB_CSUM(bsize) ((bsize) - 4)
#define XE_NS       0
#define XE_NAMELEN  1
#define XE_VALLEN   2
#define XE_NAME     SUFS_XATTR_ENTRY_HDR

/* The bytes an entry takes in an area (header, name, value, padding). */
static inline uint32_t xattr_entry_size(uint32_t name_len, uint32_t value_len)
{
	return (SUFS_XATTR_ENTRY_HDR + name_len + value_len + 3u) & ~3u;
}

/* ---- a POSIX ACL, as the value of an ACL attribute (acl.c) --------------------- */

#define ACL_VERSION   0
#define ACL_HDR       4
#define ACL_E_TAG     0
#define ACL_E_PERM    2
#define ACL_E_ID      4
#define ACL_ENTRY     8
#define ACL_XATTR_VERSION 2u
#define ACL_USER_OBJ  0x01u
#define ACL_USER      0x02u
#define ACL_GROUP_OBJ 0x04u
#define ACL_GROUP     0x08u
#define ACL_MASK      0x10u
#define ACL_OTHER     0x20u

/* For an ACL that passed sufs_acl_check(): does the mode say all of it
 * (owner, group and other entries only)?  The mode with its permission
 * bits from it; and the ACL made to agree with a mode's bits. */
int acl_is_mode(const void *value, size_t len);
uint16_t acl_mode(const void *value, size_t len, uint16_t mode);
/* The permissions of the owning group's own entry (not the mask's). */
unsigned acl_group_obj(const void *value, size_t len);
void acl_chmod(void *value, size_t len, uint16_t mode);

struct sufs_inode;

/* A fast symlink's target, held in the bytes of the block pointers. */
void fast_target_get(const struct sufs_inode *in, uint8_t *out);
void fast_target_set(struct sufs_inode *in, const char *target, size_t len);

/* Seal an encoded inode with its checksum (not an all-zero one: a free
 * inode has none), and whether one holds its checksum. */
void inode_seal(uint8_t *raw, uint32_t ino);
int inode_csum_ok(const uint8_t *raw, uint32_t ino);

/* Are the entries of a directory block well formed (they tile the block up
 * to its tail, names hold no '/' or NUL, lengths fit)?  0, or
 * -SUFS_ECORRUPT with *why. */
int dir_block_check(const uint8_t *blk, uint32_t bsize, const char **why);

#endif
