/*
 * dirhash.c - an in-memory index of a large directory's entries (after
 * FreeBSD's dirhash), so that looking up, adding and removing names in a
 * directory of many blocks does not scan it all each time.
 *
 * The index is a cache, never the truth: it is built from the directory's
 * blocks when a directory of DIRHASH_MIN_BLOCKS or more is first used, kept
 * up to date by dir.c's changes, and thrown away whenever in doubt (memory,
 * a raw block write, the directory freed).  A hit is always checked against
 * the entry's bytes in the block.
 *
 * It holds, per directory: an open-addressing table from a name's hash to
 * the (block, offset) of its entry; per block the largest room a new
 * entry could take there (free slot or slack after a live entry); and for
 * each size an entry can have, the first block that may have room for it
 * (as FreeBSD's dh_firstfree), so that finding room does not scan every
 * block's room when the early blocks keep a little slack.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>

#define DIRHASH_MIN_BLOCKS 4
#define DIRHASH_MAX_DIRS 32
#define FITS ((SUFS_DIRENT_HDR + SUFS_NAME_MAX + 7) / 8 + 1) /* entry sizes / 8, and 0 */
#define EMPTY 0xffffffffu
#define GONE 0xfffffffeu

struct slot {
	uint32_t lblk;    /* EMPTY, GONE (a tombstone) or the entry's block */
	uint32_t hash;
	uint32_t off;
};

struct dirhash {
	uint32_t ino;
	uint64_t used;     /* for LRU */
	struct slot *slots;
	uint32_t nslots, nlive, ngone;
	uint16_t *room;    /* per block: the largest entry size that fits */
	uint32_t nblocks, capblocks;
	uint32_t fit[FITS]; /* no block before fit[s] has room for an entry of 8 * s bytes */
};

static void dh_free(struct dirhash *h)
{
	if (!h)
		return;
	free(h->slots);
	free(h->room);
	free(h);
}

void dirhash_drop(struct sufs_fs *fs, uint32_t ino)
{
	unsigned i;
	for (i = 0; i < DIRHASH_MAX_DIRS; i++) {
		struct dirhash *h = fs->dirhash[i];
		if (h && (h->ino == ino || ino == 0)) {
			dh_free(h);
			fs->dirhash[i] = NULL;
		}
	}
}

static int dh_insert(struct dirhash *h, uint32_t hash, uint32_t lblk, uint32_t off);

static int dh_grow(struct dirhash *h)
{
	struct slot *old = h->slots;
	uint32_t n = h->nslots, i;

	h->nslots = n ? 2 * n : 256;
	while (h->nlive * 2 >= h->nslots)
		h->nslots *= 2;
	h->slots = malloc(h->nslots * sizeof(*h->slots));
	if (!h->slots) {
		h->slots = old;
		h->nslots = n;
		return -ENOMEM;
	}
	for (i = 0; i < h->nslots; i++)
		h->slots[i].lblk = EMPTY;
	h->nlive = h->ngone = 0;
	for (i = 0; i < n; i++)
		if (old[i].lblk < GONE)
			dh_insert(h, old[i].hash, old[i].lblk, old[i].off);
	free(old);
	return 0;
}

static int dh_insert(struct dirhash *h, uint32_t hash, uint32_t lblk, uint32_t off)
{
	uint32_t i;

	if ((h->nlive + h->ngone + 1) * 4 >= h->nslots * 3 && dh_grow(h))
		return -ENOMEM;
	for (i = hash & (h->nslots - 1); h->slots[i].lblk < GONE; i = (i + 1) & (h->nslots - 1))
		;
	if (h->slots[i].lblk == GONE)
		h->ngone--;
	h->slots[i].lblk = lblk;
	h->slots[i].hash = hash;
	h->slots[i].off = off;
	h->nlive++;
	return 0;
}

/* The room in one block: the largest entry that could be put there. */
static uint16_t block_room(const uint8_t *blk, uint32_t bsize)
{
	uint32_t end = bsize - SUFS_DIR_TAIL_SIZE, off, reclen, used, best = 0;

	for (off = 0; off < end; off += reclen) {
		reclen = get16(blk + off + DE_RECLEN);
		used = get32(blk + off + DE_INO) ? dirent_size(blk[off + DE_NAMELEN]) : 0;
		if (reclen - used > best)
			best = reclen - used;
	}
	return (uint16_t)(best > 0xffff ? 0xffff : best);
}

static int set_room(struct dirhash *h, uint32_t lblk, uint16_t room)
{
	uint32_t s;

	if (lblk >= h->capblocks) {
		uint32_t cap = h->capblocks ? h->capblocks : 16;
		uint16_t *p;
		while (cap <= lblk)
			cap *= 2;
		p = realloc(h->room, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		h->room = p;
		h->capblocks = cap;
	}
	if (lblk >= h->nblocks)
		h->nblocks = lblk + 1;
	h->room[lblk] = room;
	for (s = 0; s < FITS && 8 * s <= room; s++)
		if (h->fit[s] > lblk)
			h->fit[s] = lblk;
	return 0;
}

/* Index one block's entries and room. */
static int dh_scan_block(struct dirhash *h, const uint8_t *blk, uint32_t bsize, uint32_t lblk)
{
	uint32_t end = bsize - SUFS_DIR_TAIL_SIZE, off;
	int err = 0;

	for (off = 0; off < end && !err; off += get16(blk + off + DE_RECLEN))
		if (get32(blk + off + DE_INO))
			err = dh_insert(h, name_hash((const char *)blk + off + DE_NAME,
						     blk[off + DE_NAMELEN]), lblk, off);
	return err ? err : set_room(h, lblk, block_room(blk, bsize));
}

/*
 * The index of a directory, built on first use when it is large enough;
 * NULL when it is small (or memory is short): callers then scan.
 */
struct dirhash *dirhash_get(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *din)
{
	uint64_t n = din->size / fs->bsize, lblk, pblk;
	struct dirhash *h;
	unsigned i, victim = 0;
	struct buf *b;

	/* a directory block read in another role since (a damaged image):
	 * every index may be stale */
	if (fs->dirhash_retypes != fs->cache.retypes) {
		dirhash_drop(fs, 0);
		fs->dirhash_retypes = fs->cache.retypes;
	}
	for (i = 0; i < DIRHASH_MAX_DIRS; i++) {
		h = fs->dirhash[i];
		if (h && h->ino == ino) {
			h->used = ++fs->dirhash_clock;
			return h;
		}
	}
	if (n < DIRHASH_MIN_BLOCKS || n > UINT32_MAX)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->ino = ino;
	for (lblk = 0; lblk < n; lblk++) {
		if (bmap_get(fs, din, lblk, &pblk) || !pblk ||
		    buf_get(fs, pblk, BUF_DIR, &b)) {
			dh_free(h);
			return NULL;
		}
		if (b->dir_bad || dh_scan_block(h, b->data, fs->bsize, (uint32_t)lblk)) {
			buf_put(fs, b);
			dh_free(h);
			return NULL;
		}
		buf_put(fs, b);
	}
	for (i = 0; i < DIRHASH_MAX_DIRS; i++) {
		if (!fs->dirhash[i]) {
			victim = i;
			break;
		}
		if (fs->dirhash[i]->used < fs->dirhash[victim]->used)
			victim = i;
	}
	dh_free(fs->dirhash[victim]);
	fs->dirhash[victim] = h;
	h->used = ++fs->dirhash_clock;
	return h;
}

/* Candidates for a name: call fn for each (block, offset) whose hash matches
 * until it returns nonzero. */
int dirhash_lookup(struct dirhash *h, const char *name, size_t len,
		   int (*fn)(void *arg, uint32_t lblk, uint32_t off), void *arg)
{
	uint32_t hash = name_hash(name, len), i;
	int rc;

	for (i = hash & (h->nslots - 1); h->slots[i].lblk != EMPTY; i = (i + 1) & (h->nslots - 1)) {
		if (h->slots[i].lblk == GONE || h->slots[i].hash != hash)
			continue;
		rc = fn(arg, h->slots[i].lblk, h->slots[i].off);
		if (rc)
			return rc;
	}
	return 0;
}

int dirhash_add(struct sufs_fs *fs, struct dirhash *h, const char *name, size_t len,
		uint32_t lblk, uint32_t off, const uint8_t *blk)
{
	int err = dh_insert(h, name_hash(name, len), lblk, off);
	if (!err)
		err = set_room(h, lblk, block_room(blk, fs->bsize));
	if (err)
		dirhash_drop(fs, h->ino);
	return err;
}

void dirhash_remove(struct sufs_fs *fs, struct dirhash *h, const char *name, size_t len,
		    uint32_t lblk, uint32_t off, const uint8_t *blk)
{
	uint32_t hash = name_hash(name, len), i;

	for (i = hash & (h->nslots - 1); h->slots[i].lblk != EMPTY; i = (i + 1) & (h->nslots - 1)) {
		if (h->slots[i].lblk == lblk && h->slots[i].off == off) {
			h->slots[i].lblk = GONE;
			h->nlive--;
			h->ngone++;
			break;
		}
	}
	if (set_room(h, lblk, block_room(blk, fs->bsize)))
		dirhash_drop(fs, h->ino);
}

/* The first block with room for an entry of `need` bytes (dirent_size()),
 * or UINT32_MAX.  A size's pointer moves back only when a block gains
 * room (a removal), so n adds with no removal between them cost
 * O(n + blocks) in all, not O(n * blocks). */
uint32_t dirhash_find_room(struct dirhash *h, uint32_t need)
{
	uint32_t s = (need + 7) / 8, *p;

	if (s >= FITS)
		return UINT32_MAX;
	for (p = &h->fit[s]; *p < h->nblocks; ++*p)
		if (h->room[*p] >= 8 * s)
			return *p;
	return UINT32_MAX;
}

/* The next block after `after` with room for `need` bytes, or UINT32_MAX
 * (the room found in a block may be a slot dir_add() passes over). */
uint32_t dirhash_room_after(const struct dirhash *h, uint32_t need, uint32_t after)
{
	uint32_t s = (need + 7) / 8, i;

	for (i = after + 1; s < FITS && i < h->nblocks; i++)
		if (h->room[i] >= 8 * s)
			return i;
	return UINT32_MAX;
}
