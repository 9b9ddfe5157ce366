/*
 * xattr.c - an inode's extended attributes as records: read from where
 * they are (the inode's own bytes, or its attribute block), changed in
 * memory as one sorted area of entries, and written back as an update of
 * an attribute block or as a new block (man/sufs.5 gives the bytes).
 *
 * Like the other files of this layer it records updates and never orders
 * them: which change waits for which is the operations' (ops/xattr.c).
 * An area in memory is always as large as a block's (xattr_area_max());
 * when its entries fit in SUFS_XATTR_INLINE bytes they go in the inode.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>

size_t xattr_area_max(const struct sufs_fs *fs)
{
	return XB_CSUM(fs->bsize) - XB_ENTRIES;
}

/* The bytes the entries of an area take (up to its first free byte). */
size_t xattr_area_used(const uint8_t *area, size_t max)
{
	size_t off = 0;

	while (off + SUFS_XATTR_ENTRY_HDR <= max && area[off + XE_NS])
		off += xattr_entry_size(area[off + XE_NAMELEN], get16(area + off + XE_VALLEN));
	return off;
}

/*
 * The attributes of in, into area (xattr_area_max() bytes, zeros after
 * the entries).  A pointer out of range, a block that is no attribute
 * block or whose entries are malformed: -SUFS_ECORRUPT; a bad checksum:
 * -SUFS_ECHECKSUM, unless the file system ignores them.
 */
int xattr_load(struct sufs_fs *fs, const struct sufs_inode *in, uint8_t *area)
{
	size_t max = xattr_area_max(fs);
	struct buf *b;
	int err;

	memset(area, 0, max);
	if (!in->xattr_block) {
		if (sufs_xattr_check(in->xattr, SUFS_XATTR_INLINE, NULL, NULL))
			return -SUFS_ECORRUPT;
		memcpy(area, in->xattr, SUFS_XATTR_INLINE);
		return 0;
	}
	if (!block_in_range(fs, in->xattr_block))
		return -SUFS_ECORRUPT;
	err = buf_get(fs, in->xattr_block, BUF_XATTR, &b);
	if (err)
		return err;
	if (b->csum_bad && !(fs->flags & SUFS_OPEN_IGNORE_CSUM))
		err = get32(b->data + XB_MAGIC) != SUFS_XATTR_MAGIC ? -SUFS_ECORRUPT
								    : -SUFS_ECHECKSUM;
	else if (b->dir_bad)
		err = -SUFS_ECORRUPT;
	else
		memcpy(area, b->data + XB_ENTRIES, max);
	buf_put(fs, b);
	return err;
}

/* Compare the entry at e with (ns, name): <0, 0, >0, in the area's order. */
static int entry_cmp(const uint8_t *e, unsigned ns, const char *name, size_t len)
{
	size_t elen = e[XE_NAMELEN];
	int d = (int)e[XE_NS] - (int)ns;

	if (!d)
		d = memcmp(e + XE_NAME, name, elen < len ? elen : len);
	if (!d)
		d = elen < len ? -1 : elen > len;
	return d;
}

/* Where (ns, name) is in area (1, *off its entry), or where it would go
 * (0, *off the entry it would go before, or the end). */
int xattr_find(const uint8_t *area, size_t max, unsigned ns, const char *name, size_t len,
	       size_t *off)
{
	size_t o = 0;
	int d;

	while (o + SUFS_XATTR_ENTRY_HDR <= max && area[o + XE_NS]) {
		d = entry_cmp(area + o, ns, name, len);
		if (d >= 0) {
			*off = o;
			return d == 0;
		}
		o += xattr_entry_size(area[o + XE_NAMELEN], get16(area + o + XE_VALLEN));
	}
	*off = o;
	return 0;
}

/* Take out the entry at off; the ones after it move up. */
void xattr_remove_at(uint8_t *area, size_t max, size_t off)
{
	size_t used = xattr_area_used(area, max);
	size_t size = xattr_entry_size(area[off + XE_NAMELEN], get16(area + off + XE_VALLEN));

	memmove(area + off, area + off + size, used - off - size);
	memset(area + used - size, 0, size);
}

/*
 * Set (ns, name) to value in area, in its place in the order (replacing
 * it if it is there).  -ENOSPC, area unchanged, when the entries would
 * not fit in max bytes.
 */
int xattr_put(uint8_t *area, size_t max, unsigned ns, const char *name, size_t len,
	      const void *value, size_t vlen)
{
	size_t off, used = xattr_area_used(area, max), size = xattr_entry_size((uint32_t)len,
									       (uint32_t)vlen);
	size_t old = 0;
	uint8_t *e;

	if (xattr_find(area, max, ns, name, len, &off))
		old = xattr_entry_size(area[off + XE_NAMELEN], get16(area + off + XE_VALLEN));
	if (vlen > UINT16_MAX || used - old + size > max)
		return -ENOSPC;
	memmove(area + off + size, area + off + old, used - off - old);
	if (used - old + size < used)
		memset(area + used - old + size, 0, old - size);
	e = area + off;
	memset(e, 0, size);
	e[XE_NS] = (uint8_t)ns;
	e[XE_NAMELEN] = (uint8_t)len;
	put16(e + XE_VALLEN, (uint16_t)vlen);
	memcpy(e + XE_NAME, name, len);
	if (vlen)
		memcpy(e + XE_NAME + len, value, vlen);
	return 0;
}

/* The header of an attribute block, in b's bytes. */
static void block_header(uint8_t *data)
{
	put32(data + XB_MAGIC, SUFS_XATTR_MAGIC);
	put32(data + XB_REFCOUNT, 1);
}

/*
 * Write area into the attribute block blk in place: the bytes that
 * change are one update, which waits for nothing (the block is whole in
 * every write of it, old or new); *id is it (0: nothing changed).
 */
int xattr_block_write(struct sufs_fs *fs, uint64_t blk, const uint8_t *area, upd_id *id)
{
	size_t max = xattr_area_max(fs), lo = 0, hi = max;
	uint8_t *p;
	struct buf *b;
	int err;

	*id = 0;
	if (!block_in_range(fs, blk))
		return -SUFS_ECORRUPT;
	err = buf_get(fs, blk, BUF_XATTR, &b);
	if (err)
		return err;
	p = b->data + XB_ENTRIES;
	while (lo < hi && p[lo] == area[lo])
		lo++;
	while (hi > lo && p[hi - 1] == area[hi - 1])
		hi--;
	if (lo < hi) {
		*id = buf_update(fs, b, (uint32_t)(XB_ENTRIES + lo), (uint32_t)(hi - lo),
				 UPD_EXTATTR, NULL);
		memcpy(p + lo, area + lo, hi - lo);
	}
	buf_put(fs, b);
	return 0;
}

/*
 * A new attribute block near goal holding area.  Into w go what a
 * pointer to it must wait for (its bitmap bit and its contents: rule 1).
 */
int xattr_block_new(struct sufs_fs *fs, uint64_t goal, const uint8_t *area, uint64_t *blk,
		    struct waits *w)
{
	struct buf *b;
	int err = block_new(fs, goal, BUF_XATTR, UPD_EXTATTR, blk, &b, w);

	if (err)
		return err;
	block_header(b->data);
	memcpy(b->data + XB_ENTRIES, area, xattr_area_max(fs));
	b->csum_bad = 0;
	b->dir_bad = 0;
	buf_put(fs, b);
	return 0;
}
