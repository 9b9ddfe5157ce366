/*
 * deps_priv.h - the dependency engine's own records.  Only the engine's
 * files include it (deps.c, epoch.c, query.c, span.c, walk.c), and its
 * white-box unit tests; every other layer sees the engine through engine.h.
 */
#ifndef SUFS_DEPS_PRIV_H
#define SUFS_DEPS_PRIV_H

#include "sufs_int.h"

/* One recorded change of a block's bytes (deps.c explains). */
struct upd {
	/* what a walk of a block's updates reads comes first (64 bytes) */
	upd_id id;
	struct buf *b;
	struct upd *bnext;              /* on the same buffer: newer */
	struct edge *befores;           /* what it waits for */
	uint8_t *undo;                  /* old bytes; NULL when it can never be undone,
					 * or when they were all zero (zero_undo) */
	uint32_t off, len;
	uint8_t kind;                   /* enum upd_kind */
	uint8_t included;               /* scratch: allowed in the image being built */
	uint8_t inflight;               /* written in the epoch in progress */
	uint8_t zero_undo;              /* the old bytes were all zero: kept as this flag */
	uint8_t deferred;               /* deferred work waits for it */
	uint8_t seen;                   /* scratch: in deps_flush_set()'s closure */
	uint8_t counter;                /* a change of a counter that may be undone:
					 * by subtracting delta, not by old bytes */
	uint8_t height;                 /* scratch: the drain's count of block writes
					 * that must follow it (deps_drain()) */
	uint32_t span;                  /* its place in the block's spans, when it may be undone */
	int32_t delta;                  /* a counter's change */
	struct edge *afters;            /* what waits for it */
	struct upd *bprev;              /* on the same buffer: older */
	struct upd *hnext;              /* id hash chain */
};

/* A wait: after waits for before (both lists are doubly linked, so that an
 * edge comes off in O(1)). */
struct edge {
	struct upd *before, *after;
	struct edge *next_after;        /* in before->afters */
	struct edge *next_before;       /* in after->befores */
	struct edge **prev_after;       /* what points to it in before->afters */
	struct edge **prev_before;      /* what points to it in after->befores */
};

/* Work that waits for updates to be on disk (frees). */
struct deferred {
	struct deferred *next;
	int (*fn)(struct sufs_fs *fs, void *arg);
	void *arg;
	unsigned nwaits;
	upd_id waits[];
};

/* The byte range of an update that may be undone, kept in an array per
 * block so that the search for overlaps reads memory in order. */
struct uspan {
	uint32_t off, end;
	struct upd *u;
};

/* A block's spans are indexed by grain, a 64th of the block (span.c). */
#define DEPS_GRAIN_BITS 6
#define DEPS_GRAINS (1u << DEPS_GRAIN_BITS)

/*
 * The engine's part of each cached buffer: the bytes the cache keeps after
 * every struct buf for the layer above it (cache_init()'s extra), found
 * with bd().
 */
struct bdeps {
	struct upd *upds, *ulast;       /* pending updates, oldest first, newest */
	struct upd *fold;               /* one of them that is never undone, or NULL */
	uint32_t nupds;                 /* how many */
	uint32_t nundo;                 /* of them, those that may be undone */
	struct uspan *spans;            /* where those are, oldest first (NULL: gone) */
	uint32_t nspans, capspans;
	uint64_t *grains;               /* with many spans: for each grain of the
					 * block, a bit per span that may lie over it */
	uint32_t gwords;                /* words of bits per grain (0: no index) */
	uint32_t undone_in_write;       /* updates left out of its last write image */
	uint8_t written;                /* scratch: written in the epoch in progress */
	uint8_t wanted;                 /* scratch: the epoch in progress wants it */
	uint8_t held;                   /* held back one epoch by the drain (want_drain()) */
	uint8_t ready_whole;            /* scratch: block_ready()'s answers, kept by */
	int16_t ready_top;              /* ready_top() for want_drain() */
};

static inline struct bdeps *bd(const struct buf *b)
{
	return (struct bdeps *)buf_extra(b);
}

/* A note: the newest pending update filed under a key (deps_note()). */
struct note {
	uint64_t key;
	upd_id id;
};

struct deps {
	struct upd **hash;
	size_t nhash;
	upd_id next_id;
	struct deferred *deferred;
	uint64_t ndeferred;
	uint64_t pending, edges, undo_bytes, span_bytes, mem;
	uint64_t peak_pending, peak_mem, peak_undo;
	uint64_t created, merged, undone, epochs;
	uint64_t waits;                 /* edges made, ever */
	uint64_t forgotten;              /* ranges forgotten as never written */
	uint32_t grain_shift;           /* a grain's size in bytes, as a shift */
	int failed;                     /* memory ran out: ordering not guaranteed */
	int epoch_failed;               /* a write or barrier failed: what was
					 * pending may be on disk all the same */
	struct pool edge_pool, upd_pool; /* freed ones kept for reuse */
	uint8_t *stage;                 /* where an epoch builds its write images */
	int running_deferred;
	struct note *notes;             /* deps_note(), in no order */
	size_t nnotes, capnotes;
	int (*order_lost)(struct sufs_fs *fs); /* deps_init()'s hook */
};

/* deps.c, for the engine's other files */
struct upd *deps_find(struct sufs_fs *fs, upd_id id);
/* The write image of b into out: how many pending updates it carries,
 * and in *undone how many it leaves out; (unsigned)-1 when no memory. */
unsigned deps_image(struct sufs_fs *fs, struct buf *b, uint8_t *out, unsigned *undone);
int deps_allowed(const struct upd *u);
void deps_upd_free(struct sufs_fs *fs, struct upd *u);
void deps_mark_on_disk(struct sufs_fs *fs, struct buf *b);

static inline int undoable(const struct upd *u)
{
	return u->undo || u->zero_undo || u->counter;
}

/* Is u a change, that may be undone, of the counter at [off, off+len)? */
static inline int same_counter(const struct upd *u, uint32_t off, uint32_t len)
{
	return u->counter && u->off == off && u->len == len;
}

/* Add v to the little-endian counter of len bytes at p (modulo its size). */
static inline void counter_add(uint8_t *p, uint32_t len, int64_t v)
{
	uint64_t x = 0;
	uint32_t i;

	for (i = 0; i < len; i++)
		x |= (uint64_t)p[i] << (8 * i);
	x += (uint64_t)v;
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(x >> (8 * i));
}

static inline int overlaps(const struct upd *u, uint32_t off, uint32_t len)
{
	return off < u->off + u->len && u->off < off + len;
}

/* d->mem is kept as the sum of what it counts (deps.c's account(), span.c's
 * for the spans); the peaks move only when something grows (deps_check()
 * recomputes the sum). */
static inline void deps_peaks(struct deps *d)
{
	if (d->pending > d->peak_pending)
		d->peak_pending = d->pending;
	if (d->mem > d->peak_mem)
		d->peak_mem = d->mem;
	if (d->undo_bytes > d->peak_undo)
		d->peak_undo = d->undo_bytes;
}

/* span.c: the spans of the updates that may be undone, and their index */
int span_add(struct deps *d, struct buf *b, struct upd *u);
void span_set(struct deps *d, struct upd *u);
void span_drop(struct deps *d, struct buf *b, struct upd *u);
int span_indexed(const struct deps *d, const struct buf *b, uint32_t i);

/* The grains [*g0, *g1] that [off, end) lies over (an empty range: the
 * grain of off, where one that straddles off is looked for). */
static inline void grains_of(const struct deps *d, uint32_t off, uint32_t end,
			      uint32_t *g0, uint32_t *g1)
{
	*g0 = off >> d->grain_shift;
	*g1 = end > off ? (end - 1) >> d->grain_shift : *g0;
	if (*g1 >= DEPS_GRAINS)
		*g1 = DEPS_GRAINS - 1;
}

/* Does the span (of an undoable update still pending) overlap [off, off+len)? */
static inline int span_hits(const struct uspan *sp, uint32_t off, uint32_t len)
{
	return sp->u && off < sp->end && sp->off < off + len;
}

/* The spans of b over [off, off+len), oldest first: span_first(), then
 * span_next() until it returns NULL. */
struct span_iter {
	const struct buf *b;
	uint32_t off, len, g0, g1;
	uint32_t i;                     /* next index (no index: next span) */
	uint64_t bits;                  /* candidates left in word i / 64 */
};

static inline uint64_t grains_word(const struct span_iter *it, uint32_t w)
{
	uint64_t bits = 0;
	uint32_t g;

	for (g = it->g0; g <= it->g1; g++)
		bits |= bd(it->b)->grains[g * bd(it->b)->gwords + w];
	return bits;
}

static inline void span_first(struct span_iter *it, const struct deps *d,
			      const struct buf *b, uint32_t off, uint32_t len)
{
	it->b = b;
	it->off = off;
	it->len = len;
	it->i = 0;
	grains_of(d, off, off + len, &it->g0, &it->g1);
	it->bits = bd(b)->gwords && bd(b)->nspans ? grains_word(it, 0) : 0;
}

static inline const struct uspan *span_next(struct span_iter *it)
{
	const struct buf *b = it->b;
	const struct uspan *sp;

	if (!bd(b)->gwords) {
		while (it->i < bd(b)->nspans)
			if (span_hits(sp = &bd(b)->spans[it->i++], it->off, it->len))
				return sp;
		return NULL;
	}
	for (;;) {
		while (!it->bits) {
			it->i = (it->i / 64 + 1) * 64;
			if (it->i >= bd(b)->nspans)
				return NULL;
			it->bits = grains_word(it, it->i / 64);
		}
		sp = &bd(b)->spans[it->i / 64 * 64 + (uint32_t)__builtin_ctzll(it->bits)];
		it->bits &= it->bits - 1;
		if (sp < bd(b)->spans + bd(b)->nspans && span_hits(sp, it->off, it->len))
			return sp;
	}
}


/* epoch.c */
int deps_run_deferred(struct sufs_fs *fs);

#endif /* SUFS_DEPS_PRIV_H */
