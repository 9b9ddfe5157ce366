/*
 * cache.c - the buffer cache.
 *
 * One buffer per block, found through a hash table and kept on an LRU list;
 * the dirty ones are on a list of their own as well.
 * A buffer always holds the newest bytes of its block.  Layers above change
 * those bytes only after announcing the change with buf_update(); the cache
 * owns the decision of when a block goes out and what bytes it carries: the
 * block's write image, sealed with its checksums at write time, so that a
 * checksum always covers exactly the bytes that reach the disk.
 *
 * What a write image carries is the dependency engine's business
 * (engine/deps.c): its buf_update() records each change as an update, and
 * write-back goes out in epochs built by deps_epoch().  The cache knows
 * nothing of the engine: it keeps, after each struct buf, the bytes the
 * engine asked for at cache_init() (buf_extra()), and reaches the layers
 * above only through the hooks they set in struct cache: write_back (the
 * engine, when the cache is full of dirty buffers), before_change and
 * wants_old (snapshots, which copy a block before its first change).
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>

static size_t hash_of(const struct cache *c, uint64_t blk)
{
	return (size_t)((blk * 0x9e3779b97f4a7c15ull) >> 20) & (c->nhash - 1);
}

int cache_init(struct sufs_fs *fs, size_t limit_bytes, size_t extra)
{
	struct cache *c = &fs->cache;
	size_t n = 1;

	memset(c, 0, sizeof(*c));
	c->extra = (extra + 7) & ~(size_t)7;
	sufs_set_cache_size(fs, limit_bytes);
	while (n < c->limit)
		n <<= 1;
	c->nhash = n;
	c->hash = calloc(n, sizeof(*c->hash));
	if (!c->hash)
		return -ENOMEM;
	c->lru.prev = c->lru.next = &c->lru;
	return 0;
}

void sufs_set_cache_size(struct sufs_fs *fs, size_t bytes)
{
	struct cache *c = &fs->cache;

	c->limit = bytes / fs->bsize;
	if (c->limit < 64)
		c->limit = 64;
	c->dirty_limit = c->limit * (fs->dirty_percent ? fs->dirty_percent : 50) / 100;
	/* a small cache (fsck's) would grow by a 2 MiB chunk for a few blocks */
	c->blocks.no_huge = c->limit * fs->bsize < POOL_HUGE_MIN_USE;
}

static void lru_unlink(struct buf *b)
{
	b->prev->next = b->next;
	b->next->prev = b->prev;
}

static void lru_append(struct cache *c, struct buf *b)
{
	b->prev = c->lru.prev;
	b->next = &c->lru;
	c->lru.prev->next = b;
	c->lru.prev = b;
}

/* The dirty buffers are also on a list of their own, so that an epoch
 * reads only them, not the whole cache. */
static void dirty_link(struct cache *c, struct buf *b)
{
	b->dirty = 1;
	c->dirty++;
	b->dnext = c->dirtylist;
	if (b->dnext)
		b->dnext->dprev = &b->dnext;
	b->dprev = &c->dirtylist;
	c->dirtylist = b;
}

void cache_set_clean(struct sufs_fs *fs, struct buf *b)
{
	*b->dprev = b->dnext;
	if (b->dnext)
		b->dnext->dprev = b->dprev;
	b->dirty = 0;
	fs->cache.dirty--;
}

struct buf *cache_lookup(struct sufs_fs *fs, uint64_t blk);

static struct buf *lookup(struct cache *c, uint64_t blk)
{
	struct buf *b;
	for (b = c->hash[hash_of(c, blk)]; b; b = b->hnext)
		if (b->blk == blk)
			return b;
	return NULL;
}

static void buf_free(struct sufs_fs *fs, struct buf *b)
{
	struct cache *c = &fs->cache;
	struct buf **pp = &c->hash[hash_of(c, b->blk)];

	while (*pp != b)
		pp = &(*pp)->hnext;
	*pp = b->hnext;
	lru_unlink(b);
	if (b->dirty)
		cache_set_clean(fs, b);
	c->count--;
	pool_put(&c->blocks, b->data);
	pool_put(&c->bufs, b);
}

void cache_destroy(struct sufs_fs *fs)
{
	struct cache *c = &fs->cache;
	while (c->lru.next != &c->lru)
		buf_free(fs, c->lru.next);
	free(c->hash);
	c->hash = NULL;
	pool_drain(&c->bufs);
	pool_drain(&c->blocks);
}

/* Free clean, unused buffers, oldest first, until a sixteenth of the cache
 * is free again (so that the walk past dirty buffers is paid rarely):
 * files' data first, then the rest.  A block of the tree (an inode, bitmap,
 * directory or indirect block) is read again more often than data, and a
 * clean one in the cache lets a write-back fill the gap it leaves between
 * dirty blocks (engine/epoch.c). */
static void evict(struct sufs_fs *fs)
{
	struct cache *c = &fs->cache;
	struct buf *b, *next;
	size_t target = c->limit - c->limit / 16;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		for (b = c->lru.next; c->count >= target && b != &c->lru; b = next) {
			next = b->next;
			if (!b->refs && !b->dirty && (pass || b->type == BUF_DATA))
				buf_free(fs, b);
		}
	}
}

static int make_room(struct sufs_fs *fs)
{
	struct cache *c = &fs->cache;
	int err;

	if (c->count < c->limit)
		return 0;
	if (c->dirty > c->dirty_limit && c->write_back) {
		err = c->write_back(fs);
		if (err)
			return err;
	}
	evict(fs);
	if (c->count >= c->limit && c->dirty && c->write_back) {
		err = c->write_back(fs);
		if (err)
			return err;
		evict(fs);
	}
	return 0; /* over the limit only while everything is dirty or referenced */
}

/*
 * Check b's bytes as a block of the given role: a directory block's tail
 * checksum (of the bytes as read: a dirty block's is sealed only on its
 * write image) and its entries.  The walks of a directory trust dir_bad.
 * An attribute block likewise: its magic and checksum, its entries.
 */
static void verify_xattr(struct sufs_fs *fs, struct buf *b)
{
	if (!b->dirty) {
		b->csum_bad = get32(b->data + XB_MAGIC) != SUFS_XATTR_MAGIC ||
			      get32(b->data + XB_CSUM(fs->bsize)) !=
				      sufs_xattr_csum(b->data, fs->bsize, b->blk);
		b->csum_known = 1;
	}
	b->dir_bad = sufs_xattr_check(b->data + XB_ENTRIES,
				      XB_CSUM(fs->bsize) - XB_ENTRIES, NULL, NULL) != 0;
}

static void verify(struct sufs_fs *fs, struct buf *b, enum buf_type type)
{
	const uint8_t *tail = b->data + fs->bsize - SUFS_DIR_TAIL_SIZE;
	const char *why;

	if (type == BUF_XATTR)
		verify_xattr(fs, b);
	if (type != BUF_DIR)
		return;
	if (!b->dirty) {
		b->csum_bad = get32(tail + DT_MAGIC) != DIR_TAIL_MAGIC ||
			      get32(tail + DT_CSUM) != sufs_dirblock_csum(b->data, fs->bsize, b->blk);
		b->csum_known = 1;
	}
	b->dir_bad = dir_block_check(b->data, fs->bsize, &why) != 0;
}

static int get(struct sufs_fs *fs, uint64_t blk, enum buf_type type, int fresh,
	       struct buf **out)
{
	struct cache *c = &fs->cache;
	struct buf *b;
	int err;

	if (blk >= fs->sb.blocks_count)
		return -SUFS_ECORRUPT;
	if (fresh && c->wants_old && c->wants_old(fs, blk))
		fresh = 0; /* a snapshot wants its old contents: read them */
	b = lookup(c, blk);
	if (!b) {
		err = make_room(fs);
		if (err)
			return err;
		/*
		 * One buffer per block, even across the write-back: an epoch
		 * run to make room runs the deferred work that became ready,
		 * and a deferred free reads and changes a bitmap block, maybe
		 * the very one that missed (an allocation's).  Look again, and
		 * take that buffer: a second one read from the disk would miss
		 * the free's change, and both would go out, the older bytes
		 * perhaps last.  The engine marks an update on disk when a
		 * write of its buffer carried it (deps_epoch()); that is what
		 * holds a pointer back until its bitmap bit is on disk (rule
		 * 1) and a freed block off the bitmap until no pointer on disk
		 * names it (rule 2), and it holds only while every write of a
		 * block carries that block's newest updates.
		 */
		b = lookup(c, blk);
	}
	if (b) {
		lru_unlink(b);
		lru_append(c, b);
		if (fresh) {
			/* a block reused from scratch takes its new role */
			memset(b->data, 0, fs->bsize);
			b->csum_bad = 0;
			b->dir_bad = 0;
			b->csum_known = 0;
			b->inodes_ok = 0;
			b->recheck = 0;
			if (type != BUF_RAW)
				b->type = (uint8_t)type;
		} else if (type != BUF_RAW && b->type != type) {
			if (!b->dirty && (b->type == BUF_RAW || b->type == BUF_DATA)) {
				/* first use with a known role */
				b->type = (uint8_t)type;
			} else {
				/* a raw write (it stays raw: it goes out exactly as
				 * written), a directory read as a file, or, on a
				 * damaged image, one block in two roles (a file's
				 * pointer to a directory block): whoever has it now
				 * may change it, so its own role checks it again */
				b->recheck = 1;
				b->inodes_ok = 0;
				if (b->type == BUF_DIR)
					c->retypes++; /* indexes of directories: stale */
			}
			verify(fs, b, type);
		} else if (b->recheck && type == b->type) {
			b->recheck = 0;
			verify(fs, b, type);
		}
		b->refs++;
		*out = b;
		return 0;
	}
	b = pool_get(&c->bufs, sizeof(*b) + c->extra);
	if (b)
		memset(b, 0, sizeof(*b) + c->extra);
	if (!b || !(b->data = pool_get(&c->blocks, fs->bsize))) {
		if (b)
			pool_put(&c->bufs, b);
		return -ENOMEM;
	}
	b->blk = blk;
	b->type = (uint8_t)type;
	if (fresh) {
		memset(b->data, 0, fs->bsize);
	} else {
		err = sufs_dev_read(fs->dev, blk << fs->bshift, b->data, fs->bsize);
		if (err) {
			pool_put(&c->blocks, b->data);
			pool_put(&c->bufs, b);
			return err;
		}
		fs->stats.block_reads++;
		verify(fs, b, type);
	}
	b->hnext = c->hash[hash_of(c, blk)];
	c->hash[hash_of(c, blk)] = b;
	lru_append(c, b);
	c->count++;
	b->refs = 1;
	*out = b;
	return 0;
}

int buf_get(struct sufs_fs *fs, uint64_t blk, enum buf_type type, struct buf **out)
{
	return get(fs, blk, type, 0, out);
}

/* A block about to be filled from scratch: no read, zeros. */
int buf_get_new(struct sufs_fs *fs, uint64_t blk, enum buf_type type, struct buf **out)
{
	return get(fs, blk, type, 1, out);
}

void buf_put(struct sufs_fs *fs, struct buf *b)
{
	(void)fs;
	if (b)
		b->refs--;
}

struct buf *cache_lookup(struct sufs_fs *fs, uint64_t blk)
{
	return lookup(&fs->cache, blk);
}

void cache_mark_dirty(struct sufs_fs *fs, struct buf *b)
{
	b->csum_known = 0; /* its bytes change */
	b->inodes_ok = 0;
	if (!b->dirty)
		dirty_link(&fs->cache, b);
}

/* b is about to change for the first time since a snapshot was taken
 * that needs its block: the hook copies it first. */
void cache_before_change(struct sufs_fs *fs, struct buf *b)
{
	if (fs->cache.before_change)
		fs->cache.before_change(fs, b);
}

/* A change outside the ordering (summaries, timestamps): written as it
 * stands with the block's next write. */
void buf_touch(struct sufs_fs *fs, struct buf *b)
{
	cache_before_change(fs, b);
	b->plain = 1;
	cache_mark_dirty(fs, b);
}

/* A freed block, whose updates the engine has forgotten: nothing of it
 * needs writing any more, and its buffer goes unless someone holds it. */
void cache_drop(struct sufs_fs *fs, uint64_t blk)
{
	struct buf *b = lookup(&fs->cache, blk);

	if (!b)
		return;
	if (b->dirty) {
		b->plain = 0;
		cache_set_clean(fs, b);
	}
	if (!b->refs)
		buf_free(fs, b);
}

/* What a block of each type is, for the tools (sufs_deps_walk()). */
static const char *const buf_type_names[] = {
	[BUF_RAW] = "raw",
	[BUF_DATA] = "data",
	[BUF_BITMAP] = "bitmap",
	[BUF_ITABLE] = "inode table",
	[BUF_DIR] = "directory",
	[BUF_IND] = "indirect",
	[BUF_XATTR] = "attribute",
};

const char *buf_type_name(unsigned type)
{
	return type < sizeof(buf_type_names) / sizeof(buf_type_names[0]) && buf_type_names[type] ?
		       buf_type_names[type] : "raw";
}

/* Seal a write image of b: checksums computed over the bytes written. */
void cache_seal(struct sufs_fs *fs, struct buf *b, uint8_t *out)
{
	uint32_t i, ino0;

	switch (b->type) {
	case BUF_DIR:
		sufs_dirblock_seal(out, fs->bsize, b->blk);
		break;
	case BUF_XATTR:
		sufs_xattr_seal(out, fs->bsize, b->blk);
		break;
	case BUF_ITABLE: {
		uint32_t g = (uint32_t)(b->blk / fs->sb.blocks_per_group);
		struct sufs_group_layout l;
		sufs_group_layout(&fs->sb, g, &l);
		ino0 = g * fs->sb.inodes_per_group + 1 +
		       (uint32_t)(b->blk - l.inode_table) * fs->inodes_per_block;
		for (i = 0; i < fs->inodes_per_block; i++) {
			uint8_t *raw = out + i * SUFS_INODE_SIZE;
			inode_seal(raw, ino0 + i);
		}
		break;
	}
	default:
		break;
	}
}
