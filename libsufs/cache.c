/*
 * cache.c - the buffer cache.
 *
 * One buffer per block, found through a hash table and kept on an LRU list.
 * A buffer always holds the newest bytes of its block.  Layers above change
 * those bytes only after announcing the change with buf_update(); the cache
 * owns the decision of when a block goes out and what bytes it carries: the
 * block's write image, sealed with its checksums at write time, so that a
 * checksum always covers exactly the bytes that reach the disk.
 *
 * This version writes every dirty block as it stands in memory (no ordering
 * between blocks, a barrier at sync): the dependency engine of the
 * soft-updates issue plugs into buf_update() and cache_write_image().
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>

#define FLUSH_RUN_MAX 256   /* blocks gathered into one device write */

static size_t hash_of(const struct cache *c, uint64_t blk)
{
	return (size_t)((blk * 0x9e3779b97f4a7c15ull) >> 20) & (c->nhash - 1);
}

int cache_init(struct sufs_fs *fs, size_t limit_bytes)
{
	struct cache *c = &fs->cache;
	size_t n = 1;

	memset(c, 0, sizeof(*c));
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
	c->dirty_limit = c->limit / 2;
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
		c->dirty--;
	c->count--;
	free(b->data);
	free(b);
}

void cache_destroy(struct sufs_fs *fs)
{
	struct cache *c = &fs->cache;
	while (c->lru.next != &c->lru)
		buf_free(fs, c->lru.next);
	free(c->hash);
	c->hash = NULL;
}

/* Free clean, unused buffers, oldest first, until there is room for one more. */
static void evict(struct sufs_fs *fs)
{
	struct cache *c = &fs->cache;
	struct buf *b = c->lru.next, *next;

	while (c->count >= c->limit && b != &c->lru) {
		next = b->next;
		if (!b->refs && !b->dirty)
			buf_free(fs, b);
		b = next;
	}
}

static int make_room(struct sufs_fs *fs)
{
	struct cache *c = &fs->cache;
	int err;

	if (c->count < c->limit)
		return 0;
	evict(fs);
	if (c->count >= c->limit && c->dirty) {
		err = cache_flush(fs);
		if (err)
			return err;
		evict(fs);
	}
	return 0; /* over the limit only while everything is referenced */
}

static void verify(struct sufs_fs *fs, struct buf *b)
{
	const uint8_t *tail = b->data + fs->bsize - SUFS_DIR_TAIL_SIZE;

	const char *why;

	if (b->type != BUF_DIR)
		return;
	b->csum_bad = get32(tail) != DIR_TAIL_MAGIC ||
		      get32(tail + 4) != sufs_dirblock_csum(b->data, fs->bsize, b->blk);
	/* checked once when read: our own changes keep a block well formed */
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
	b = lookup(c, blk);
	if (b) {
		lru_unlink(b);
		lru_append(c, b);
		if (fresh) {
			/* a block reused from scratch takes its new role */
			memset(b->data, 0, fs->bsize);
			b->csum_bad = 0;
			b->dir_bad = 0;
			if (type != BUF_RAW)
				b->type = (uint8_t)type;
		} else if (type != BUF_RAW && b->type != type && !b->dirty &&
			   (b->type == BUF_RAW || b->type == BUF_DATA)) {
			/* first use with a known role: check it as such (a dirty
			 * raw block stays raw: it goes out exactly as written) */
			b->type = (uint8_t)type;
			verify(fs, b);
		}
		b->refs++;
		*out = b;
		return 0;
	}
	err = make_room(fs);
	if (err)
		return err;
	b = calloc(1, sizeof(*b));
	if (!b || !(b->data = malloc(fs->bsize))) {
		free(b);
		return -ENOMEM;
	}
	b->blk = blk;
	b->type = (uint8_t)type;
	if (fresh) {
		memset(b->data, 0, fs->bsize);
	} else {
		err = sufs_dev_read(fs->dev, blk << fs->bshift, b->data, fs->bsize);
		if (err) {
			free(b->data);
			free(b);
			return err;
		}
		fs->stats.block_reads++;
		verify(fs, b);
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

/*
 * Announce a change of bytes [off, off+len) of b, before making it.  This is
 * where the dependency engine records an update (old bytes, kind, what it
 * waits for); here the block simply becomes dirty.
 */
void buf_update(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len, enum upd_kind kind)
{
	(void)off;
	(void)len;
	(void)kind;
	if (!b->dirty) {
		b->dirty = 1;
		fs->cache.dirty++;
	}
}

/* Drop a block from the cache without writing it (it was freed). */
void buf_forget(struct sufs_fs *fs, uint64_t blk)
{
	struct buf *b = lookup(&fs->cache, blk);
	if (b && !b->refs)
		buf_free(fs, b);
}

/* The bytes that go to disk for b: its contents, checksums sealed. */
int cache_write_image(struct sufs_fs *fs, struct buf *b, uint8_t *out)
{
	uint32_t i, ino0;

	memcpy(out, b->data, fs->bsize);
	switch (b->type) {
	case BUF_DIR:
		sufs_dirblock_seal(out, fs->bsize, b->blk);
		break;
	case BUF_ITABLE: {
		uint32_t g = (uint32_t)(b->blk / fs->sb.blocks_per_group);
		struct sufs_group_layout l;
		sufs_group_layout(&fs->sb, g, &l);
		ino0 = g * fs->sb.inodes_per_group + 1 +
		       (uint32_t)(b->blk - l.inode_table) * fs->inodes_per_block;
		for (i = 0; i < fs->inodes_per_block; i++) {
			uint8_t *raw = out + i * SUFS_INODE_SIZE;
			if (!sufs_inode_is_zero(raw))
				put32(raw + 252, sufs_inode_csum(raw, ino0 + i));
		}
		break;
	}
	default:
		break;
	}
	return 0;
}

static int cmp_blk(const void *a, const void *b)
{
	uint64_t x = (*(struct buf *const *)a)->blk, y = (*(struct buf *const *)b)->blk;
	return x < y ? -1 : x > y;
}

/* Write every dirty buffer, in block order, consecutive blocks gathered
 * into one device write.  No barrier: the caller decides. */
int cache_flush(struct sufs_fs *fs)
{
	struct cache *c = &fs->cache;
	struct buf **list, *b;
	uint8_t *stage;
	size_t n = 0, i, run;
	int err = 0;

	if (!c->dirty)
		return 0;
	list = malloc(c->dirty * sizeof(*list));
	stage = malloc((size_t)FLUSH_RUN_MAX * fs->bsize);
	if (!list || !stage) {
		free(list);
		free(stage);
		return -ENOMEM;
	}
	for (b = c->lru.next; b != &c->lru; b = b->next)
		if (b->dirty)
			list[n++] = b;
	qsort(list, n, sizeof(*list), cmp_blk);
	for (i = 0; i < n && !err; i += run) {
		for (run = 0; i + run < n && run < FLUSH_RUN_MAX &&
			      list[i + run]->blk == list[i]->blk + run; run++)
			cache_write_image(fs, list[i + run], stage + run * fs->bsize);
		err = sufs_dev_write(fs->dev, list[i]->blk << fs->bshift, stage,
				     run * fs->bsize);
		if (err)
			break;
		for (size_t k = 0; k < run; k++) {
			list[i + k]->dirty = 0;
			c->dirty--;
		}
		fs->stats.block_writes += run;
	}
	free(list);
	free(stage);
	return err;
}
