/*
 * format.c - the on-disk format: byte order, checksums and geometry.
 *
 * Every record is little-endian on disk and decoded into a host-order
 * struct (sufs.h) before anything else looks at it.  The field offsets are
 * the format: format.h holds them, man/sufs.5 documents the same table.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <sys/stat.h>
#include <zlib.h>

/* ---- superblock ---------------------------------------------------------- */

static uint32_t crc(uint32_t seed, const void *p, size_t len)
{
	return (uint32_t)crc32(seed, p, (uInt)len);
}

uint32_t sufs_super_csum(const void *raw)
{
	return crc(0, raw, SB_CSUM);
}

void sufs_super_decode(const void *raw, struct sufs_super *sb)
{
	const uint8_t *p = raw;
	unsigned i;

	memset(sb, 0, sizeof(*sb));
	sb->magic = get32(p + SB_MAGIC);
	sb->version = get32(p + SB_VERSION);
	sb->block_size = get32(p + SB_BLOCK_SIZE);
	sb->inode_size = get32(p + SB_INODE_SIZE);
	sb->blocks_count = get64(p + SB_BLOCKS);
	sb->free_blocks = get64(p + SB_FREE_BLOCKS);
	sb->inodes_count = get32(p + SB_INODES);
	sb->free_inodes = get32(p + SB_FREE_INODES);
	sb->blocks_per_group = get32(p + SB_BPG);
	sb->inodes_per_group = get32(p + SB_IPG);
	sb->groups_count = get32(p + SB_GROUPS);
	sb->gdt_blocks = get32(p + SB_GDT_BLOCKS);
	sb->root_ino = get32(p + SB_ROOT_INO);
	sb->first_ino = get32(p + SB_FIRST_INO);
	sb->state = get32(p + SB_STATE);
	sb->flags = get32(p + SB_FLAGS);
	sb->write_mode = get32(p + SB_WRITE_MODE);
	sb->mount_count = get32(p + SB_MOUNT_COUNT);
	sb->mkfs_time = (int64_t)get64(p + SB_MKFS_TIME);
	sb->mount_time = (int64_t)get64(p + SB_MOUNT_TIME);
	sb->write_time = (int64_t)get64(p + SB_WRITE_TIME);
	sb->check_time = (int64_t)get64(p + SB_CHECK_TIME);
	memcpy(sb->uuid, p + SB_UUID, sizeof(sb->uuid));
	memcpy(sb->label, p + SB_LABEL, sizeof(sb->label));
	sb->sb_group = get32(p + SB_SB_GROUP);
	sb->features_compat = get32(p + SB_FEAT_COMPAT);
	sb->features_incompat = get32(p + SB_FEAT_INCOMPAT);
	sb->features_ro_compat = get32(p + SB_FEAT_RO);
	sb->check_result = get32(p + SB_CHECK_RESULT);
	sb->default_mode = get32(p + SB_DEFAULT_MODE);
	for (i = 0; i < SUFS_SNAP_SLOTS; i++) {
		const uint8_t *s = p + SB_SNAP + i * SB_SNAP_SIZE;
		sb->snap[i].ino = get32(s);
		sb->snap[i].flags = get32(s + 4);
		sb->snap[i].time = (int64_t)get64(s + 8);
	}
	sb->checksum = get32(p + SB_CSUM);
}

void sufs_super_encode(const struct sufs_super *sb, void *raw)
{
	uint8_t *p = raw;
	unsigned i;

	memset(p, 0, SUFS_SB_SIZE);
	put32(p + SB_MAGIC, sb->magic);
	put32(p + SB_VERSION, sb->version);
	put32(p + SB_BLOCK_SIZE, sb->block_size);
	put32(p + SB_INODE_SIZE, sb->inode_size);
	put64(p + SB_BLOCKS, sb->blocks_count);
	put64(p + SB_FREE_BLOCKS, sb->free_blocks);
	put32(p + SB_INODES, sb->inodes_count);
	put32(p + SB_FREE_INODES, sb->free_inodes);
	put32(p + SB_BPG, sb->blocks_per_group);
	put32(p + SB_IPG, sb->inodes_per_group);
	put32(p + SB_GROUPS, sb->groups_count);
	put32(p + SB_GDT_BLOCKS, sb->gdt_blocks);
	put32(p + SB_ROOT_INO, sb->root_ino);
	put32(p + SB_FIRST_INO, sb->first_ino);
	put32(p + SB_STATE, sb->state);
	put32(p + SB_FLAGS, sb->flags);
	put32(p + SB_WRITE_MODE, sb->write_mode);
	put32(p + SB_MOUNT_COUNT, sb->mount_count);
	put64(p + SB_MKFS_TIME, (uint64_t)sb->mkfs_time);
	put64(p + SB_MOUNT_TIME, (uint64_t)sb->mount_time);
	put64(p + SB_WRITE_TIME, (uint64_t)sb->write_time);
	put64(p + SB_CHECK_TIME, (uint64_t)sb->check_time);
	memcpy(p + SB_UUID, sb->uuid, sizeof(sb->uuid));
	memcpy(p + SB_LABEL, sb->label, sizeof(sb->label));
	put32(p + SB_SB_GROUP, sb->sb_group);
	put32(p + SB_FEAT_COMPAT, sb->features_compat);
	put32(p + SB_FEAT_INCOMPAT, sb->features_incompat);
	put32(p + SB_FEAT_RO, sb->features_ro_compat);
	put32(p + SB_CHECK_RESULT, sb->check_result);
	put32(p + SB_DEFAULT_MODE, sb->default_mode);
	for (i = 0; i < SUFS_SNAP_SLOTS; i++) {
		uint8_t *s = p + SB_SNAP + i * SB_SNAP_SIZE;
		put32(s, sb->snap[i].ino);
		put32(s + 4, sb->snap[i].flags);
		put64(s + 8, (uint64_t)sb->snap[i].time);
	}
	put32(p + SB_CSUM, sufs_super_csum(p));
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int sufs_super_check(const struct sufs_super *sb, uint64_t device_bytes, const char **why)
{
	const char *dummy;
	uint64_t groups, bs = sb->block_size;
	uint32_t ipb;
	struct sufs_group_layout l0, last;

	if (!why)
		why = &dummy;
	*why = NULL;
#define BAD(err, field) do { *why = field; return -(err); } while (0)
	if (sb->magic != SUFS_MAGIC)
		BAD(SUFS_EMAGIC, "magic");
	if (sb->version != SUFS_VERSION)
		BAD(SUFS_EVERSION, "version");
	if (sb->features_incompat & ~SUFS_FEATURE_INCOMPAT_KNOWN)
		BAD(SUFS_EFEATURE, "features_incompat");
	if (!is_pow2(bs) || bs < SUFS_MIN_BLOCK_SIZE || bs > SUFS_MAX_BLOCK_SIZE)
		BAD(SUFS_ECORRUPT, "block_size");
	if (sb->inode_size != SUFS_INODE_SIZE)
		BAD(SUFS_ECORRUPT, "inode_size");
	ipb = (uint32_t)(bs / SUFS_INODE_SIZE);
	if (sb->blocks_per_group < 64 || sb->blocks_per_group % 8 ||
	    sb->blocks_per_group > 8 * bs)
		BAD(SUFS_ECORRUPT, "blocks_per_group");
	if (sb->inodes_per_group == 0 || sb->inodes_per_group % ipb ||
	    sb->inodes_per_group > 8 * bs)
		BAD(SUFS_ECORRUPT, "inodes_per_group");
	if (sb->blocks_count == 0 || sb->blocks_count > UINT64_MAX / bs)
		BAD(SUFS_ECORRUPT, "blocks_count");
	groups = (sb->blocks_count + sb->blocks_per_group - 1) / sb->blocks_per_group;
	if (groups != sb->groups_count || groups > UINT32_MAX)
		BAD(SUFS_ECORRUPT, "groups_count or blocks_count"); /* they disagree */
	if ((uint64_t)sb->inodes_count != groups * sb->inodes_per_group)
		BAD(SUFS_ECORRUPT, "inodes_count");
	if ((uint64_t)sb->gdt_blocks != (groups * SUFS_GROUP_DESC_SIZE + bs - 1) / bs)
		BAD(SUFS_ECORRUPT, "gdt_blocks");
	if (sb->root_ino != SUFS_ROOT_INO)
		BAD(SUFS_ECORRUPT, "root_ino");
	if (sb->first_ino != SUFS_FIRST_INO || sb->inodes_count < SUFS_FIRST_INO)
		BAD(SUFS_ECORRUPT, "first_ino");
	if (sb->write_mode > SUFS_MODE_ASYNC)
		BAD(SUFS_ECORRUPT, "write_mode");
	if (sb->default_mode > SUFS_MODE_ASYNC)
		BAD(SUFS_ECORRUPT, "default_mode");
	sufs_group_layout(sb, 0, &l0);
	if (l0.first_data >= l0.end)
		BAD(SUFS_ECORRUPT, "gdt_blocks");
	sufs_group_layout(sb, sb->groups_count - 1, &last);
	if (last.first_data >= last.end)
		BAD(SUFS_ECORRUPT, "blocks_count");
	if (device_bytes && sb->blocks_count * bs > device_bytes)
		BAD(SUFS_ETRUNCATED, "blocks_count");
#undef BAD
	return 0;
}

int sufs_super_check_counts(const struct sufs_super *sb, const char **why)
{
	const char *dummy;

	if (!why)
		why = &dummy;
	*why = sb->free_blocks > sb->blocks_count ? "free_blocks" :
	       sb->free_inodes > sb->inodes_count ? "free_inodes" : NULL;
	return *why ? -SUFS_ECORRUPT : 0;
}

int sufs_group_check(const struct sufs_super *sb, uint32_t group, const void *raw,
		     struct sufs_group *gd, const char **why)
{
	struct sufs_group_layout l;
	const char *dummy;

	if (!why)
		why = &dummy;
	*why = NULL;
	sufs_group_decode(raw, gd);
	if (gd->checksum != sufs_group_csum(raw, group))
		return -SUFS_ECHECKSUM;
	sufs_group_layout(sb, group, &l);
	if (gd->block_bitmap != l.block_bitmap)
		*why = "block_bitmap";
	else if (gd->inode_bitmap != l.inode_bitmap)
		*why = "inode_bitmap";
	else if (gd->inode_table != l.inode_table)
		*why = "inode_table";
	else if (gd->free_blocks > l.end - l.start)
		*why = "free_blocks";
	else if (gd->free_inodes > sb->inodes_per_group)
		*why = "free_inodes";
	return *why ? -SUFS_ECORRUPT : 0;
}

/* ---- group descriptors ----------------------------------------------------- */

uint32_t sufs_group_csum(const void *raw, uint32_t group)
{
	uint8_t seed[4];
	put32(seed, group);
	return crc(crc(0, seed, 4), raw, GD_CSUM);
}

void sufs_group_decode(const void *raw, struct sufs_group *gd)
{
	const uint8_t *p = raw;
	gd->free_blocks = get32(p + GD_FREE_BLOCKS);
	gd->free_inodes = get32(p + GD_FREE_INODES);
	gd->used_dirs = get32(p + GD_USED_DIRS);
	gd->flags = get32(p + GD_FLAGS);
	gd->block_bitmap = get64(p + GD_BLOCK_BITMAP);
	gd->inode_bitmap = get64(p + GD_INODE_BITMAP);
	gd->inode_table = get64(p + GD_INODE_TABLE);
	gd->checksum = get32(p + GD_CSUM);
}

void sufs_group_encode(const struct sufs_group *gd, uint32_t group, void *raw)
{
	uint8_t *p = raw;
	memset(p, 0, SUFS_GROUP_DESC_SIZE);
	put32(p + GD_FREE_BLOCKS, gd->free_blocks);
	put32(p + GD_FREE_INODES, gd->free_inodes);
	put32(p + GD_USED_DIRS, gd->used_dirs);
	put32(p + GD_FLAGS, gd->flags);
	put64(p + GD_BLOCK_BITMAP, gd->block_bitmap);
	put64(p + GD_INODE_BITMAP, gd->inode_bitmap);
	put64(p + GD_INODE_TABLE, gd->inode_table);
	put32(p + GD_CSUM, sufs_group_csum(p, group));
}

/* ---- inodes ---------------------------------------------------------------- */

uint32_t sufs_inode_csum(const void *raw, uint32_t ino)
{
	uint8_t seed[4];
	put32(seed, ino);
	return crc(crc(0, seed, 4), raw, IN_CSUM);
}

int sufs_inode_is_zero(const void *raw)
{
	return mem_is_zero(raw, SUFS_INODE_SIZE);
}

void sufs_inode_decode(const void *raw, struct sufs_inode *in)
{
	const uint8_t *p = raw;
	unsigned i;

	in->mode = get16(p + IN_MODE);
	in->flags = get16(p + IN_FLAGS);
	in->links = get32(p + IN_LINKS);
	in->uid = get32(p + IN_UID);
	in->gid = get32(p + IN_GID);
	in->size = get64(p + IN_SIZE);
	in->blocks = get64(p + IN_BLOCKS);
	in->atime = (int64_t)get64(p + IN_ATIME);
	in->mtime = (int64_t)get64(p + IN_MTIME);
	in->ctime = (int64_t)get64(p + IN_CTIME);
	in->crtime = (int64_t)get64(p + IN_CRTIME);
	in->atime_ns = get32(p + IN_ATIME_NS);
	in->mtime_ns = get32(p + IN_MTIME_NS);
	in->ctime_ns = get32(p + IN_CTIME_NS);
	in->crtime_ns = get32(p + IN_CRTIME_NS);
	in->generation = get32(p + IN_GENERATION);
	in->rdev_major = get32(p + IN_RDEV_MAJOR);
	in->rdev_minor = get32(p + IN_RDEV_MINOR);
	for (i = 0; i < SUFS_NBLOCKS; i++)
		in->block[i] = get64(p + IN_BLOCK_PTR(i));
	in->xattr_block = get64(p + IN_XATTR_BLOCK);
	memcpy(in->xattr, p + IN_XATTR, SUFS_XATTR_INLINE);
	in->checksum = get32(p + IN_CSUM);
}

void sufs_inode_encode(const struct sufs_inode *in, uint32_t ino, void *raw)
{
	uint8_t *p = raw;
	unsigned i;

	memset(p, 0, SUFS_INODE_SIZE);
	put16(p + IN_MODE, in->mode);
	put16(p + IN_FLAGS, in->flags);
	put32(p + IN_LINKS, in->links);
	put32(p + IN_UID, in->uid);
	put32(p + IN_GID, in->gid);
	put64(p + IN_SIZE, in->size);
	put64(p + IN_BLOCKS, in->blocks);
	put64(p + IN_ATIME, (uint64_t)in->atime);
	put64(p + IN_MTIME, (uint64_t)in->mtime);
	put64(p + IN_CTIME, (uint64_t)in->ctime);
	put64(p + IN_CRTIME, (uint64_t)in->crtime);
	put32(p + IN_ATIME_NS, in->atime_ns);
	put32(p + IN_MTIME_NS, in->mtime_ns);
	put32(p + IN_CTIME_NS, in->ctime_ns);
	put32(p + IN_CRTIME_NS, in->crtime_ns);
	put32(p + IN_GENERATION, in->generation);
	put32(p + IN_RDEV_MAJOR, in->rdev_major);
	put32(p + IN_RDEV_MINOR, in->rdev_minor);
	for (i = 0; i < SUFS_NBLOCKS; i++)
		put64(p + IN_BLOCK_PTR(i), in->block[i]);
	put64(p + IN_XATTR_BLOCK, in->xattr_block);
	memcpy(p + IN_XATTR, in->xattr, SUFS_XATTR_INLINE);
	inode_seal(p, ino);
}

void inode_seal(uint8_t *raw, uint32_t ino)
{
	if (!sufs_inode_is_zero(raw))
		put32(raw + IN_CSUM, sufs_inode_csum(raw, ino));
}

int inode_csum_ok(const uint8_t *raw, uint32_t ino)
{
	return get32(raw + IN_CSUM) == sufs_inode_csum(raw, ino);
}

/* A fast symlink's target is stored in the block pointers' bytes: byte i
 * of the target is byte i of the pointer area (IN_BLOCK). */
void fast_target_get(const struct sufs_inode *in, uint8_t *out)
{
	unsigned i;
	for (i = 0; i < SUFS_NBLOCKS; i++)
		put64(out + IN_BLOCK_PTR(i) - IN_BLOCK, in->block[i]);
}

void fast_target_set(struct sufs_inode *in, const char *target, size_t len)
{
	uint8_t raw[SUFS_FAST_SYMLINK_MAX] = { 0 };
	unsigned i;

	memcpy(raw, target, len);
	for (i = 0; i < SUFS_NBLOCKS; i++)
		in->block[i] = get64(raw + IN_BLOCK_PTR(i) - IN_BLOCK);
}

/* ---- directory blocks -------------------------------------------------------- */

uint32_t sufs_dirblock_csum(const void *raw, uint32_t block_size, uint64_t blk)
{
	uint8_t seed[8];
	put64(seed, blk);
	return crc(crc(0, seed, 8), raw, block_size - 4);
}

void sufs_dirblock_seal(void *raw, uint32_t block_size, uint64_t blk)
{
	uint8_t *tail = (uint8_t *)raw + block_size - SUFS_DIR_TAIL_SIZE;
	put32(tail + DT_MAGIC, DIR_TAIL_MAGIC);
	put32(tail + DT_CSUM, sufs_dirblock_csum(raw, block_size, blk));
}

int dir_block_check(const uint8_t *blk, uint32_t bsize, const char **why)
{
	uint32_t off = 0, end = bsize - SUFS_DIR_TAIL_SIZE, reclen, namelen, i;
	const uint8_t *de;

	while (off < end) {
		de = blk + off;
		if (end - off < SUFS_DIRENT_HDR) {
			*why = "entry header crosses the end of the block";
			return -SUFS_ECORRUPT;
		}
		reclen = get16(de + DE_RECLEN);
		namelen = de[DE_NAMELEN];
		if (reclen < SUFS_DIRENT_HDR || reclen % 8 || reclen > end - off) {
			*why = "bad entry length";
			return -SUFS_ECORRUPT;
		}
		if (get32(de + DE_INO)) {
			if (namelen == 0 || dirent_size(namelen) > reclen) {
				*why = "bad name length";
				return -SUFS_ECORRUPT;
			}
			for (i = 0; i < namelen; i++) {
				if (de[DE_NAME + i] == '/' || de[DE_NAME + i] == 0) {
					*why = "name holds '/' or NUL";
					return -SUFS_ECORRUPT;
				}
			}
		}
		off += reclen;
	}
	return 0;
}

/* ---- attribute areas and blocks ---------------------------------------------- */

static const char *const xattr_prefixes[] = {
	[SUFS_XATTR_USER] = "user.",
	[SUFS_XATTR_ACL_ACCESS] = "system.posix_acl_access",
	[SUFS_XATTR_ACL_DEFAULT] = "system.posix_acl_default",
	[SUFS_XATTR_TRUSTED] = "trusted.",
	[SUFS_XATTR_SECURITY] = "security.",
};

const char *sufs_xattr_prefix(unsigned ns)
{
	return ns < sizeof(xattr_prefixes) / sizeof(xattr_prefixes[0]) ? xattr_prefixes[ns]
									 : NULL;
}

/* Is the namespace's name the whole name (an ACL), with nothing after it? */
static int xattr_whole_name(unsigned ns)
{
	return ns == SUFS_XATTR_ACL_ACCESS || ns == SUFS_XATTR_ACL_DEFAULT;
}

/* The order of entries: by namespace, then name bytes (a shorter name
 * first when one begins the other).  <0, 0, >0. */
static int xattr_cmp(const uint8_t *a, const uint8_t *b)
{
	size_t la = a[XE_NAMELEN], lb = b[XE_NAMELEN];
	int d = (int)a[XE_NS] - (int)b[XE_NS];

	if (!d)
		d = memcmp(a + XE_NAME, b + XE_NAME, la < lb ? la : lb);
	if (!d)
		d = (int)la - (int)lb;
	return d;
}

/* What is wrong with the entry at p, len bytes before the area's end, or
 * NULL (prev: the entry before it, or NULL). */
static const char *xattr_entry_problem(const uint8_t *p, size_t len, const uint8_t *prev)
{
	uint32_t nlen, vlen, size, i;
	const char *prefix, *why;

	if (len < SUFS_XATTR_ENTRY_HDR)
		return "an entry's header crosses the end";
	prefix = sufs_xattr_prefix(p[XE_NS]);
	if (!prefix)
		return "an unknown namespace";
	nlen = p[XE_NAMELEN];
	vlen = get16(p + XE_VALLEN);
	if (xattr_whole_name(p[XE_NS]) ? nlen != 0
				       : nlen == 0 || nlen + strlen(prefix) > SUFS_XATTR_NAME_MAX)
		return "a bad name length";
	size = xattr_entry_size(nlen, vlen);
	if (size > len)
		return "an entry crosses the end";
	for (i = 0; i < nlen; i++)
		if (!p[XE_NAME + i])
			return "a NUL in a name";
	if (!mem_is_zero(p + XE_NAME + nlen + vlen, size - SUFS_XATTR_ENTRY_HDR - nlen - vlen))
		return "padding that is not zero";
	if (prev && xattr_cmp(prev, p) >= 0)
		return "entries out of order, or twice";
	if (xattr_whole_name(p[XE_NS]) && sufs_acl_check(p + XE_NAME, vlen, &why))
		return "an ACL that is not valid";
	return NULL;
}

int sufs_xattr_check(const void *area, size_t len, const char **why, size_t *bad)
{
	const uint8_t *a = area, *prev = NULL;
	const char *dummy;
	size_t off = 0, dummy_off;

	if (!why)
		why = &dummy;
	if (!bad)
		bad = &dummy_off;
	*why = NULL;
	while (off < len && a[off + XE_NS] != 0) {
		*why = xattr_entry_problem(a + off, len - off, prev);
		if (*why) {
			*bad = off;
			return -SUFS_ECORRUPT;
		}
		prev = a + off;
		off += xattr_entry_size(prev[XE_NAMELEN], get16(prev + XE_VALLEN));
	}
	if (off < len && !mem_is_zero(a + off, len - off)) {
		*why = "bytes after the last entry";
		*bad = off;
		return -SUFS_ECORRUPT;
	}
	return 0;
}

int sufs_xattr_walk(const void *area, size_t len, sufs_xattr_fn fn, void *arg)
{
	const uint8_t *a = area, *p;
	struct sufs_xattr x;
	size_t off = 0;
	int rc = 0;

	while (!rc && off + SUFS_XATTR_ENTRY_HDR <= len && a[off + XE_NS] != 0) {
		p = a + off;
		x.ns = p[XE_NS];
		x.name_len = p[XE_NAMELEN];
		x.value_len = get16(p + XE_VALLEN);
		x.name = (const char *)p + XE_NAME;
		x.value = p + XE_NAME + x.name_len;
		off += xattr_entry_size(x.name_len, x.value_len);
		rc = fn(arg, &x);
	}
	return rc;
}

uint32_t sufs_xattr_csum(const void *raw, uint32_t block_size, uint64_t blk)
{
	uint8_t seed[8];
	put64(seed, blk);
	return crc(crc(0, seed, 8), raw, XB_CSUM(block_size));
}

void sufs_xattr_seal(void *raw, uint32_t block_size, uint64_t blk)
{
	put32((uint8_t *)raw + XB_CSUM(block_size), sufs_xattr_csum(raw, block_size, blk));
}

/* ---- geometry ------------------------------------------------------------------ */

static int is_power_of(uint32_t n, uint32_t base)
{
	while (n % base == 0)
		n /= base;
	return n == 1;
}

int sufs_group_has_backup(uint32_t group)
{
	if (group <= 1)
		return group == 1;
	return is_power_of(group, 3) || is_power_of(group, 5) || is_power_of(group, 7);
}

void sufs_group_layout(const struct sufs_super *sb, uint32_t group, struct sufs_group_layout *l)
{
	uint64_t meta;
	uint32_t bs = sb->block_size;

	l->start = (uint64_t)group * sb->blocks_per_group;
	l->end = l->start + sb->blocks_per_group;
	if (l->end > sb->blocks_count)
		l->end = sb->blocks_count;
	l->gdt_start = UINT64_MAX;
	l->gdt_blocks = 0;
	if (group == 0) {
		l->sb_block = SUFS_SB_OFFSET / bs;
		l->gdt_start = l->sb_block + 1;
		l->gdt_blocks = sb->gdt_blocks;
		meta = l->gdt_start + l->gdt_blocks;
	} else if (sufs_group_has_backup(group)) {
		l->sb_block = l->start;
		meta = l->start + 1;
	} else {
		l->sb_block = UINT64_MAX;
		meta = l->start;
	}
	l->block_bitmap = meta;
	l->inode_bitmap = meta + 1;
	l->inode_table = meta + 2;
	l->inode_table_blocks = sb->inodes_per_group / (bs / SUFS_INODE_SIZE);
	l->first_data = l->inode_table + l->inode_table_blocks;
}

uint64_t sufs_group_overhead(const struct sufs_super *sb, uint32_t group)
{
	struct sufs_group_layout l;
	sufs_group_layout(sb, group, &l);
	return l.first_data - l.start;
}

int sufs_backup_offset(const struct sufs_super *sb, unsigned n, uint64_t *off)
{
	uint32_t g;
	for (g = 1; g < sb->groups_count; g++) {
		if (!sufs_group_has_backup(g))
			continue;
		if (n-- == 0) {
			*off = (uint64_t)g * sb->blocks_per_group * sb->block_size;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- names -------------------------------------------------------------------- */

unsigned sufs_ftype_of_mode(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return SUFS_FT_REG;
	case S_IFDIR: return SUFS_FT_DIR;
	case S_IFCHR: return SUFS_FT_CHR;
	case S_IFBLK: return SUFS_FT_BLK;
	case S_IFIFO: return SUFS_FT_FIFO;
	case S_IFSOCK: return SUFS_FT_SOCK;
	case S_IFLNK: return SUFS_FT_LNK;
	}
	return SUFS_FT_UNKNOWN;
}

static const char *const mode_names[] = {
	[SUFS_MODE_SOFTDEP] = "softdep",
	[SUFS_MODE_SYNC] = "sync",
	[SUFS_MODE_ASYNC] = "async",
};

const char *sufs_mode_name(unsigned mode)
{
	return mode <= SUFS_MODE_ASYNC ? mode_names[mode] : "unknown";
}

int sufs_mode_parse(const char *name, unsigned *mode)
{
	unsigned m;
	for (m = 0; m <= SUFS_MODE_ASYNC; m++) {
		if (strcmp(name, mode_names[m]) == 0) {
			*mode = m;
			return 0;
		}
	}
	return -EINVAL;
}
