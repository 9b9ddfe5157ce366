/*
 * deps.c - the dependency engine: soft updates on one general record.
 *
 * NOTES ON THE DESIGN OF THE ENGINE
 *
 * Definitions.
 *
 *   An UPDATE records one change to a byte range of one cached block: the
 *   block, the offset and length, a kind (the 1999 paper's names, shown
 *   by the tools; two kinds also steer policy: a copy-on-write hold
 *   keeps its kind through merges and stays when its range is forgotten,
 *   and sync mode does not drain data), the OLD BYTES when the update may
 *   ever have to be undone, and the set of older updates it WAITS FOR
 *   (its befores).
 *
 *   An update is PENDING until a write of its block that carries it has
 *   passed a barrier; it is then ON DISK, its record is freed and its id
 *   forgotten.  So an id that is not in the table of live updates names
 *   an update that is on disk, or one that will never be: forgotten with
 *   a file removed before it reached the disk (deps_forget_new()), or
 *   dropped with a block that was freed, which no pointer on disk reaches
 *   any more (deps_cancel()).  Either way nothing need wait for it.
 *
 *   An update is ALLOWED in a write of its block when every update it
 *   waits for is on disk, or is on the same block and allowed in the same
 *   write (a block write is atomic).
 *
 *   A COUNTER is a little-endian number of up to 8 bytes (a link count)
 *   changed by deltas (buf_count()): a change of it that may be undone
 *   keeps its delta, not old bytes, and is undone by subtracting it.
 *
 *   The WRITE IMAGE of a block is a copy of its buffer with every pending
 *   update that is not allowed undone, newest first.  The buffer itself
 *   always holds the newest bytes and is never rolled back.
 *
 *   An EPOCH is a set of block writes followed by one barrier.  Updates are
 *   marked on disk only after the barrier.  A crash therefore leaves: every
 *   epoch before the crash, plus any subset of the writes of the epoch in
 *   flight.
 *
 *   DEFERRED WORK waits for a set of updates to be on disk, then runs:
 *   returning freed blocks and inodes to the bitmaps.
 *
 * Invariants.  deps_check() checks (1)-(3) and the engine's own lists and
 * sums after every operation in debug and sanitizer builds, and the unit
 * tests (test_deps.c) call it; deps_image() asserts (3) at every write.
 * (4)-(7) are proven from outside: by the unit tests (a drain leaves
 * nothing pending, a freed block is not reused early) and by the crash
 * harness, which checks every crash state (doc/CRASH.md).
 *
 *   (1) An update waits only for older updates (lower ids).  So the graph
 *       is acyclic and the oldest pending update is always allowed:
 *       every epoch makes progress.  Enforced by deps_update(), which only
 *       ever adds edges to updates that already exist.
 *   (2) An update that overlaps a pending update that may be undone waits
 *       for it, or is merged into it.  So undoing newest first restores
 *       exactly the bytes of what is undone, and never a newer change's.
 *       (An update that is never undone can be overlapped freely.  When
 *       merge_range() widens an undoable update over bytes that a newer,
 *       never-undone update changed, the old bytes it takes come from the
 *       buffer and so already hold that change: undoing it never reverts
 *       it.)  Two changes of one counter commute (each is undone by
 *       its delta): neither waits for the other.
 *       Enforced by deps_update().
 *   (3) An update that has no old bytes (nor a counter's delta) is
 *       allowed in every write: it was created waiting for nothing.  (Old
 *       bytes that are all zero are kept as a flag, not a copy.)  Enforced by deps_update() (undo is
 *       kept exactly when there is something to wait for) and checked by
 *       deps_image().
 *   (4) No write image contains an update that is not allowed.  Enforced
 *       by deps_image().
 *   (5) Nothing is marked on disk before the barrier of its epoch.
 *       Enforced by deps_epoch().
 *   (6) A freed block or inode returns to the bitmap only after every
 *       update that cleared a pointer to it is on disk.  Enforced by
 *       deps_defer() and deps_epoch() (deferred work runs after a barrier).
 *       One that no pointer on disk ever named (its inode never reached
 *       the disk: deps_forget_new(); or the pointer to it did not, and is
 *       taken back: deps_take_back()) returns at once.
 *   (7) After deps_drain() nothing is pending and no work is deferred.
 *
 * When memory runs out for a record, or for a part of it (a wait, the old
 * bytes, its span), the change is kept as one that waits for nothing and
 * is never undone, or is not recorded at all: invariant (2) no longer
 * holds, and the ordering is lost (d->failed).  Before the next write the
 * superblock on disk says that the image needs a full check (the
 * order_lost hook deps_init() was handed: fs_lost_order()); sync and
 * close still write everything, then report -ENOMEM.
 *
 * What keeps it small: checksums are sealed on the write image, summary
 * counters and timestamps are written as they stand (outside the ordering);
 * an update that waits for nothing keeps no old bytes; a wait for an
 * update of the same block that is never undone is met by the block's own
 * writes and adds no edge (met_by_block()); a change that waits for
 * nothing and overlaps nothing undoable is folded into the block's update
 * that is never undone (fold_target(): a bitmap block's bits, a directory
 * block's headers); a later change that waits for nothing new is folded
 * into the newest pending update it overlaps, when that one already waits
 * for the others it overlaps (so a name removed before it reached the
 * disk leaves one update, whose bytes are the old ones).
 *
 * What keeps it cheap in CPU: an update looks for what it overlaps in
 * its block's array of spans (its undoable updates), indexed by 64ths of
 * the block once there are more than a few (a directory's new entries),
 * and so does the forgetting of a new inode (updates_over()), which need
 * not read the records of the block's other inodes; edges come off their
 * lists in O(1); records are reused from pools, cut from chunks offered to
 * huge pages (a page fault per 2 MiB), and laid out for the walks of a
 * block's updates; the sums are kept, not recomputed; an epoch's
 * staging area is kept from one epoch to the next; and the walks that
 * read records made long before (an epoch's, block after block; a
 * block's, record after record; a pool's free list) ask the processor for
 * the next ones while they work on this one (prefetch_ahead()).
 *
 * What keeps it cheap in writes: the range of something that never
 * reached the disk (a file removed early) is forgotten with its updates,
 * when nothing that waited for them can show an older state
 * (deps_forget_new()), and so are the blocks of a removed file that only
 * pending pointers name, the pointers taken back (deps_take_back()); a
 * drain writes only the blocks others wait for, and of those one that
 * would go with parts undone is held back an epoch, unless a longest
 * chain needs it now (deps_drain()); and an epoch fills a short gap in a
 * run with dirty blocks (epoch.c).
 *
 * Write modes change only the write-back policy: in async mode no updates
 * are recorded and blocks go out as they stand; in sync mode each
 * operation ends by draining its ordered updates; softdep writes back
 * lazily (dirty limit, age, sync, fsync).
 *
 * The engine's files: deps.c, the records and write images (this file);
 * epoch.c, deferred work, epochs, drains and flushes; query.c, what the
 * layers above may ask of what is pending; walk.c, the tools' view
 * (sufs_deps_walk(), sufs_deps_flush()); writeback.c, the policy of the
 * three modes.  Their records are private (deps_priv.h); the layers above
 * use engine.h.
 */
#include "config.h"
#include "deps_priv.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Take e out of both its lists: O(1), however many wait for one update
 * (a bitmap block's bits, which every new pointer waits for). */
static void edge_unlink(struct edge *e)
{
	*e->prev_after = e->next_after;
	if (e->next_after)
		e->next_after->prev_after = e->prev_after;
	*e->prev_before = e->next_before;
	if (e->next_before)
		e->next_before->prev_before = e->prev_before;
}

/* ---- accounting ------------------------------------------------------------------ */

static uint64_t mem_sum(const struct deps *d)
{
	return d->pending * sizeof(struct upd) + d->edges * sizeof(struct edge) +
	       d->undo_bytes + d->nhash * sizeof(struct upd *) + d->span_bytes;
}

static void account(struct deps *d, long records, long edges, long undo)
{
	d->pending += records;
	d->edges += edges;
	d->undo_bytes += undo;
	d->mem += records * (long)sizeof(struct upd) + edges * (long)sizeof(struct edge) + undo;
	if (records > 0 || edges > 0 || undo > 0)
		deps_peaks(d);
}

/* ---- the table of live updates ------------------------------------------------- */

/* Ids are handed out in order and mostly go to disk in order, so the low
 * bits spread them evenly, and updates made together sit together. */
static size_t id_slot(upd_id id, size_t nhash)
{
	return (size_t)id & (nhash - 1);
}

static size_t id_hash(const struct deps *d, upd_id id)
{
	return id_slot(id, d->nhash);
}

struct upd *deps_find(struct sufs_fs *fs, upd_id id)
{
	struct deps *d = fs->deps;
	struct upd *u;

	if (!id || !d->nhash)
		return NULL;
	for (u = d->hash[id_hash(d, id)]; u; u = u->hnext)
		if (u->id == id)
			return u;
	return NULL;
}

/* Four-fold: each growth reads every live record again (its chain link),
 * long after it was made and out of the cache. */
static int table_grow(struct deps *d)
{
	size_t n = d->nhash ? 4 * d->nhash : 1024, i;
	struct upd **h = calloc(n, sizeof(*h)), *u, *next;

	if (!h)
		return -ENOMEM;
	for (i = 0; i < d->nhash; i++) {
		for (u = d->hash[i]; u; u = next) {
			size_t k;
			next = u->hnext;
			k = id_slot(u->id, n);
			u->hnext = h[k];
			h[k] = u;
		}
	}
	free(d->hash);
	d->hash = h;
	d->mem += (n - d->nhash) * sizeof(*h);
	deps_peaks(d);
	d->nhash = n;
	return 0;
}

static void table_remove(struct deps *d, struct upd *u)
{
	struct upd **pp = &d->hash[id_hash(d, u->id)];
	while (*pp != u)
		pp = &(*pp)->hnext;
	*pp = u->hnext;
}

static int add_edge(struct deps *d, struct upd *before, struct upd *after)
{
	struct edge *e;

	for (e = after->befores; e; e = e->next_before)
		if (e->before == before)
			return 0;
	e = pool_get(&d->edge_pool, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->before = before;
	e->after = after;
	e->next_after = before->afters;
	if (e->next_after)
		e->next_after->prev_after = &e->next_after;
	e->prev_after = &before->afters;
	before->afters = e;
	e->next_before = after->befores;
	if (e->next_before)
		e->next_before->prev_before = &e->next_before;
	e->prev_before = &after->befores;
	after->befores = e;
	d->waits++;
	account(d, 0, 1, 0);
	return 0;
}

/* ---- recording a change ---------------------------------------------------------- */

/* Is every resolved wait either u itself or something u already waits for? */
static int waits_covered(struct upd *u, struct upd **w, unsigned n)
{
	unsigned i;
	struct edge *e;

	for (i = 0; i < n; i++) {
		if (w[i] == u)
			continue;
		for (e = u->befores; e; e = e->next_before)
			if (e->before == w[i])
				break;
		if (!e)
			return 0;
	}
	return 1;
}

/* u waits for nothing any more. */
static void drop_waits(struct deps *d, struct upd *u)
{
	struct edge *e;
	long n = 0;

	while ((e = u->befores) != NULL) {
		edge_unlink(e);
		pool_put(&d->edge_pool, e);
		n++;
	}
	account(d, 0, -n, 0);
}

/* Does u (the newest undoable update over [off, off+len) of b) wait
 * directly for every other undoable update over that range? */
static int waits_for_overlaps(const struct deps *d, struct buf *b, struct upd *u,
			      uint32_t off, uint32_t len)
{
	const struct edge *e;
	const struct uspan *sp;
	struct span_iter it;

	span_first(&it, d, b, off, len);
	while ((sp = span_next(&it)) != NULL && sp < bd(b)->spans + u->span) {
		for (e = u->befores; e && e->before != sp->u; e = e->next_before)
			;
		if (!e)
			return 0;
	}
	return 1;
}

/* Widen u to [off, off+len), keeping the oldest bytes of every part. */
static int merge_range(struct deps *d, struct upd *u, const uint8_t *data, uint32_t off,
		       uint32_t len)
{
	uint32_t lo = off < u->off ? off : u->off;
	uint32_t hi = off + len > u->off + u->len ? off + len : u->off + u->len;
	uint8_t *undo;

	if (lo == u->off && hi == u->off + u->len)
		return 0;
	if (u->zero_undo) {
		/* still all zeros before u, if what it grows over is */
		if (mem_is_zero(data + lo, u->off - lo) &&
		    mem_is_zero(data + u->off + u->len, hi - (u->off + u->len))) {
			u->off = lo;
			u->len = hi - lo;
			return 0;
		}
		undo = malloc(hi - lo);
		if (!undo)
			return -ENOMEM;
		memcpy(undo, data + lo, hi - lo);
		memset(undo + (u->off - lo), 0, u->len);
		u->zero_undo = 0;
		u->undo = undo;
		u->off = lo;
		u->len = hi - lo;
		account(d, 0, 0, (long)u->len);
		return 0;
	}
	if (u->undo) {
		undo = malloc(hi - lo);
		if (!undo)
			return -ENOMEM;
		/* bytes outside u are still old in the buffer: the change has not
		 * been made yet */
		memcpy(undo, data + lo, hi - lo);
		memcpy(undo + (u->off - lo), u->undo, u->len);
		free(u->undo);
		u->undo = undo;
		account(d, 0, 0, (long)(hi - lo) - (long)u->len);
	}
	u->off = lo;
	u->len = hi - lo;
	return 0;
}

static int merge_into(struct deps *d, struct upd *u, const uint8_t *data, uint32_t off,
		      uint32_t len)
{
	int err = merge_range(d, u, data, off, len);

	if (undoable(u))
		span_set(d, u);
	return err;
}

/*
 * A wait for x is met by every write of b when x is on b and is never
 * undone: such a write carries x's bytes, and one of b that carries the
 * waiting update is such a write (a directory entry's header waits so for
 * the carving of its slot, and the carving for the header it shortens).
 * Not on inode-table blocks: deps_forget_new() reads what waits for an
 * inode's updates, and must see every one.
 */
static int met_by_block(const struct upd *x, const struct buf *b)
{
	return x->b == b && !undoable(x) && b->type != BUF_ITABLE;
}

/* Does an update older than id that may be undone lie over [off, off+len)? */
static int older_over(const struct deps *d, const struct buf *b, upd_id id, uint32_t off,
		      uint32_t len)
{
	const struct uspan *sp;
	struct span_iter it;

	span_first(&it, d, b, off, len);
	while ((sp = span_next(&it)) != NULL)
		if (sp->u->id < id)
			return 1;
	return 0;
}

/*
 * A change that waits for nothing and overlaps nothing that may be undone
 * is never undone: it can be folded into a pending update of b that is
 * never undone either and not yet in flight, whose range grows over it
 * (a never-undone update's range only tells what it covers; its waiters
 * want b written, which carries both).  So a bitmap block, a data block
 * or a directory block's headers and carvings keep one such update.  On
 * an inode-table block only into the newest, when they touch or overlap:
 * mostly the stores of one inode.  (Two neighbours' stores can fold into
 * one; deps_forget_new() then declines to forget either, which costs
 * writes, never order.)
 */
static struct upd *fold_target(const struct deps *d, struct buf *b, uint32_t off,
			       uint32_t len)
{
	struct upd *t = b->type == BUF_ITABLE ? bd(b)->ulast : bd(b)->fold;
	uint32_t end = off + len, tend;

	if (!t || undoable(t) || t->inflight)
		return NULL;
	tend = t->off + t->len;
	if (b->type == BUF_ITABLE && (off > tend || t->off > end))
		return NULL;
	/* nor may it grow over an older update that may be undone: waiting
	 * for the newest update over some bytes must wait for every change
	 * to them (deps_last_over()) */
	if (bd(b)->nundo && ((off < t->off && older_over(d, b, t->id, off, t->off - off)) ||
			 (end > tend && older_over(d, b, t->id, tend, end - tend))))
		return NULL;
	return t;
}

/* The waits of ws beyond id[] (rmdir's, a deep rename's): with u
 * NULL, how many are pending and not met by b's own writes; else each of
 * those becomes a wait of u, and nonzero means memory ran out for one. */
static size_t more_waits(struct sufs_fs *fs, struct buf *b, const struct waits *ws,
			 struct upd *u)
{
	struct upd *x;
	size_t j, n = 0;

	for (j = 0; ws && j < ws->nmore; j++) {
		x = deps_find(fs, ws->more[j]);
		if (x && !met_by_block(x, b))
			n += u ? add_edge(fs->deps, x, u) != 0 : 1;
	}
	return n;
}

/*
 * Record a change of [off, off+len) of b that waits for the given updates,
 * before the caller makes it.  Returns the id of the update that carries
 * the change (an older one when merged), or 0 when there is nothing to wait
 * for: async mode, or when memory ran out.  Then d->failed is set: the
 * ordering can no longer be promised; the next epoch first marks the image
 * as needing a full check (fs_lost_order()), and sync and close, after
 * writing everything, report -ENOMEM.
 */
static upd_id deps_update(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len,
			  enum upd_kind kind, const struct waits *ws, const int32_t *delta)
{
	struct deps *d = fs->deps;
	struct upd *w[DEPS_MAX_WAITS], *hit[DEPS_MAX_WAITS], *u, *f, *x, *only = NULL;
	struct upd *t = bd(b)->ulast;
	unsigned nw = 0, i, noverlap = 0;
	size_t nmore;
	const struct uspan *sp;
	struct span_iter it;
	int lost = 0;

	if (fs->mode == SUFS_MODE_ASYNC)
		return 0;
	assert(!ws || ws->n <= DEPS_MAX_WAITS);
	for (i = 0; ws && i < ws->n && i < DEPS_MAX_WAITS; i++) {
		x = deps_find(fs, ws->id[i]);
		if (x && !met_by_block(x, b))
			w[nw++] = x;
	}
	nmore = ws && ws->nmore ? more_waits(fs, b, ws, NULL) : 0; /* no merge with them */
	/* Only updates that may be undone matter for overlaps: undoing one
	 * restores bytes a newer change may share (one never undone can be
	 * overlapped freely, and so can a counter's change by another). */
	for (span_first(&it, d, b, off, len); bd(b)->nundo && (sp = span_next(&it)) != NULL;) {
		if (delta && same_counter(sp->u, off, len))
			continue;
		if (noverlap < DEPS_MAX_WAITS)
			hit[noverlap] = sp->u;
		noverlap++;
		only = sp->u;
	}
	if (noverlap && !delta && !nmore && !only->counter && waits_covered(only, w, nw) &&
	    !only->inflight &&
	    (noverlap == 1 || waits_for_overlaps(d, b, only, off, len))) {
		/* fold into the newest undoable update it overlaps (only) when
		 * all three hold: what the change would wait for, only waits
		 * for already; only is not in flight; and only waits for every
		 * other undoable update the change overlaps.  Adds no wait. */
		if (merge_into(d, only, b->data, off, len) == 0) {
			d->merged++;
			/* a copy-on-write hold stays one (free_block() looks) */
			if (only->kind != UPD_COPYONWRITE)
				only->kind = (uint8_t)kind;
			return only->id;
		}
	} else if (noverlap == 0 && nw == 0 && !nmore && (f = fold_target(d, b, off, len)) != NULL) {
		/* never undone, like the one it folds into: one range */
		merge_into(d, f, b->data, off, len);
		d->merged++;
		return f->id;
	}
	u = pool_get(&d->upd_pool, sizeof(*u));
	if (u)
		memset(u, 0, sizeof(*u));
	if (!u || (d->pending + 1 > d->nhash && table_grow(d))) {
		if (u)
			pool_put(&d->upd_pool, u);
		d->failed = 1;
		return 0;
	}
	u->id = ++d->next_id;
	u->b = b;
	u->off = off;
	u->len = len;
	u->kind = (uint8_t)kind;
	for (i = 0; i < nw; i++)
		lost |= add_edge(d, w[i], u) != 0;
	lost |= nmore && more_waits(fs, b, ws, u) != 0;
	/* rule (2): wait for every undoable update it overlaps */
	if (noverlap <= DEPS_MAX_WAITS) {
		for (i = 0; i < noverlap; i++)
			lost |= add_edge(d, hit[i], u) != 0;
	} else {
		for (span_first(&it, d, b, off, len); (sp = span_next(&it)) != NULL;)
			if (!delta || !same_counter(sp->u, off, len))
				lost |= add_edge(d, sp->u, u) != 0;
	}
	if (u->befores && !lost) {
		/* it may be undone: keep its delta, or its old bytes (a flag
		 * when all zero, as for a new inode or entry) */
		if (delta)
			u->counter = 1, u->delta = *delta;
		else if (mem_is_zero(b->data + off, len))
			u->zero_undo = 1;
		else if ((u->undo = malloc(len)) != NULL)
			memcpy(u->undo, b->data + off, len);
		else
			lost = 1;
		if (!lost && span_add(d, b, u) == 0)
			bd(b)->nundo++;
		else
			lost = 1;
	}
	if (lost) {
		/* memory ran out for a part of the record: it is kept as a
		 * change that waits for nothing and is never undone, and the
		 * ordering is lost (the image will say so: deps_epoch()) */
		drop_waits(d, u);
		free(u->undo);
		u->undo = NULL;
		u->zero_undo = 0;
		u->counter = 0;
		d->failed = 1;
	}
	if (!undoable(u))
		bd(b)->fold = u;
	u->bprev = t;
	if (t)
		t->bnext = u;
	else
		bd(b)->upds = u;
	bd(b)->ulast = u;
	bd(b)->nupds++;
	u->hnext = d->hash[id_hash(d, u->id)];
	d->hash[id_hash(d, u->id)] = u;
	d->created++;
	account(d, 1, 0, u->undo ? (long)len : 0);
	return u->id;
}

/*
 * Announce a change of bytes [off, off+len) of b that waits for the
 * updates in w (may be NULL), before making it.  The cache's hook copies
 * the block first for a snapshot that needs it (the first change since it
 * was taken).  Returns the update that carries the change, for later
 * changes to wait for.
 */
upd_id buf_update(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len,
		  enum upd_kind kind, const struct waits *w)
{
	upd_id id;

	cache_before_change(fs, b);
	id = deps_update(fs, b, off, len, kind, w, NULL);
	cache_mark_dirty(fs, b);
	return id;
}

/*
 * Announce that the little-endian counter at [off, off+len) of b changes
 * by delta, waiting for w.  Kept as its delta, the change is undone by
 * subtracting it, whatever other changes of the counter did since: so it
 * waits for none of them, nor they for it.
 */
upd_id buf_count(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len, int32_t delta,
		 enum upd_kind kind, const struct waits *w)
{
	upd_id id;

	assert(len > 0 && len <= 8);
	cache_before_change(fs, b);
	id = deps_update(fs, b, off, len, kind, w, &delta);
	cache_mark_dirty(fs, b);
	return id;
}

/* ---- write images ---------------------------------------------------------------- */

/* Is u allowed in the write of its block being built now? Its befores are
 * older, so on the same block they were decided already. */
int deps_allowed(const struct upd *u)
{
	const struct edge *e;
	for (e = u->befores; e; e = e->next_before)
		if (e->before->b != u->b || !e->before->included)
			return 0;
	return 1;
}

/*
 * Build the write image of b into out: its bytes with every update that is
 * not allowed undone, newest first.  Returns how many pending updates the
 * image carries; *undone counts the others.
 */
unsigned deps_image(struct sufs_fs *fs, struct buf *b, uint8_t *out, unsigned *undone)
{
	struct upd *u, *stack[64], **list = stack;
	unsigned n = 0, k = 0, i;

	memcpy(out, b->data, fs->bsize);
	*undone = 0;
	for (u = bd(b)->upds; u; u = u->bnext) {
		u->included = (uint8_t)deps_allowed(u);
		k += u->included;
		n++;
	}
	if (k == n)
		return k;
	if (n > 64 && !(list = malloc(n * sizeof(*list)))) {
		/* no memory for the order: write nothing of this block now */
		for (u = bd(b)->upds; u; u = u->bnext)
			u->included = 0;
		*undone = n;
		return (unsigned)-1;
	}
	for (i = 0, u = bd(b)->upds; u; u = u->bnext)
		list[i++] = u;
	while (i--) {
		u = list[i];
		if (u->included)
			continue;
		assert(undoable(u)); /* invariant (3) */
		if (u->counter)
			counter_add(out + u->off, u->len, -(int64_t)u->delta);
		else if (u->undo)
			memcpy(out + u->off, u->undo, u->len);
		else
			memset(out + u->off, 0, u->len);
		(*undone)++;
	}
	if (list != stack)
		free(list);
	return k;
}

/* ---- marking on disk, deferred work -------------------------------------------------- */

void deps_upd_free(struct sufs_fs *fs, struct upd *u)
{
	struct deps *d = fs->deps;
	struct edge *e;
	long nedges = 0;

	/* those waiting for u wait no more; and u waited for nothing still
	 * pending when it went out, except updates of its own block written
	 * in the same image */
	while ((e = u->afters) != NULL || (e = u->befores) != NULL) {
		edge_unlink(e);
		pool_put(&d->edge_pool, e);
		nedges++;
	}
	if (u->bprev)
		u->bprev->bnext = u->bnext;
	else
		bd(u->b)->upds = u->bnext;
	if (u->bnext)
		u->bnext->bprev = u->bprev;
	else
		bd(u->b)->ulast = u->bprev;
	bd(u->b)->nupds--;
	if (undoable(u)) {
		bd(u->b)->nundo--;
		span_drop(d, u->b, u);
	}
	if (bd(u->b)->fold == u)
		bd(u->b)->fold = NULL;
	table_remove(d, u);
	account(d, -1, -nedges, u->undo ? -(long)u->len : 0);
	free(u->undo);
	pool_put(&d->upd_pool, u);
}

/* After the barrier: every update written in the epoch is on disk. */
void deps_mark_on_disk(struct sufs_fs *fs, struct buf *b)
{
	struct upd *u, *next;

	for (u = bd(b)->upds; u; u = next) {
		next = u->bnext;
		if (next)
			__builtin_prefetch(next);
		if (u->inflight)
			deps_upd_free(fs, u);
	}
}

/*
 * Forget every pending update of a block that was just freed: no pointer
 * on disk reaches it any more, so nothing it carries matters, and whatever
 * waited for those updates need not wait.
 */
void deps_cancel(struct sufs_fs *fs, struct buf *b)
{
	while (bd(b)->upds)
		deps_upd_free(fs, bd(b)->upds);
}

/*
 * The pending updates of b over [off, off+len), oldest first, into over[]
 * (at most max).  When every update of b may be undone, its spans hold
 * them all, and the index finds them without reading the records of the
 * rest of the block (an inode-table block carries the updates of all its
 * inodes); else b's list is walked.  Returns how many, or max + 1 when
 * there are more.
 */
#define FORGET_MAX 64    /* updates of a range that deps_forget_new() forgets */

static unsigned updates_over(const struct deps *d, struct buf *b, uint32_t off, uint32_t len,
			     struct upd **over, unsigned max)
{
	const struct uspan *sp;
	struct span_iter it;
	struct upd *u;
	unsigned n = 0;

	if (bd(b)->nupds == bd(b)->nundo) {
		span_first(&it, d, b, off, len);
		while ((sp = span_next(&it)) != NULL) {
			if (n == max)
				return max + 1;
			over[n++] = sp->u;
		}
		return n;
	}
	for (u = bd(b)->upds; u; u = u->bnext) {
		if (!overlaps(u, off, len))
			continue;
		if (n == max)
			return max + 1;
		over[n++] = u;
	}
	return n;
}

/* Does u lie within [off, off+len) of b (the range being forgotten)? */
static int lies_within(const struct upd *u, const struct buf *b, uint32_t off, uint32_t len)
{
	return u->b == b && u->off >= off && u->off + u->len <= off + len;
}

/*
 * The newer updates that may be undone over x, a name that waits for a
 * file being forgotten: for each byte of x, the oldest of them over it
 * holds x's byte as its old one.  To forget x, that old byte becomes the
 * one x found, as if x had never been made: an image that undoes them
 * then shows the name as it was before x, one that carries them what
 * they wrote.  A byte of x past its first key bytes that none of them
 * lies over stays as it is, in every image: the caller knows it names
 * nothing without the key (a removal changes only an entry's inode
 * number; the rest of the header is then a free slot's).  With apply 0,
 * says whether that can be done: 1 when newer updates cover the first
 * key bytes of x, none in flight or a counter, and each can take the
 * bytes (one whose old bytes are a zero flag, only zeros); 0 when none
 * lies over x; -1 when it cannot.  With apply 1, does it.
 */
static int undo_past(struct deps *d, struct upd *x, uint32_t key, int apply)
{
	const struct uspan *sp;
	struct span_iter it;
	uint64_t done = 0, need;
	uint32_t i;
	uint8_t old;
	int newer = 0;

	span_first(&it, d, x->b, x->off, x->len);
	while ((sp = span_next(&it)) != NULL) {
		struct upd *n = sp->u;
		if (sp <= bd(x->b)->spans + x->span)
			continue;
		if (!newer && (x->counter || x->len > 64 || x->deferred))
			return -1;
		newer = 1;
		if (n->inflight || n->counter)
			return -1;
		for (i = x->off; i < x->off + x->len; i++) {
			if ((done >> (i - x->off)) & 1 || i < sp->off || i >= sp->end)
				continue;
			done |= 1ull << (i - x->off);
			old = x->undo ? x->undo[i - x->off] : 0;
			if (n->undo && apply)
				n->undo[i - n->off] = old;
			else if (!n->undo && old)
				return -1;
		}
	}
	if (!newer)
		return 0;
	if (key > x->len)
		key = x->len;
	need = key == 64 ? ~0ull : (1ull << key) - 1;
	return (done & need) == need ? 1 : -1;
}

/*
 * Can x, a name that waits for a file being forgotten, be forgotten with
 * it, though newer updates that may be undone lie over it (the name was
 * renamed away, or another file's rename took its slot)?  undo_past()
 * says for its bytes.  Whatever else waits for x must be a name's removal
 * (a rename's, which waited for the new name so that the file would never
 * be without one: the file is going, under no name) or be forgotten with
 * the file ([off, off+len) of b).  Returns 1 when x can be forgotten, 0
 * when no newer update lies over it (it stays, waiting for nothing), -1
 * when it cannot be.
 */
static int name_forgettable(struct deps *d, struct upd *x, const struct buf *b,
			    uint32_t off, uint32_t len, uint32_t key)
{
	const struct edge *e;
	int r = undo_past(d, x, key, 0);

	if (r <= 0)
		return r;
	for (e = x->afters; e; e = e->next_after) {
		const struct upd *a = e->after;
		if (a->b == x->b && overlaps(a, x->off, x->len))
			continue; /* one of the newer ones */
		if (lies_within(a, b, off, len))
			continue; /* forgotten with the file */
		if (a->kind != UPD_DIRREM)
			return -1;
	}
	return 1;
}

/* Add x to the n names to forget, once; 0 when there is no room, or when
 * another name of the file lies over it in the same slot (forgetting one
 * would leave the other's bytes with nothing newer over them). */
static int add_name(struct upd **names, unsigned *n, struct upd *x)
{
	unsigned k;

	for (k = 0; k < *n; k++) {
		if (names[k] == x)
			return 1;
		if (names[k]->b == x->b && overlaps(names[k], x->off, x->len))
			return 0;
	}
	if (*n == FORGET_MAX)
		return 0;
	names[(*n)++] = x;
	return 1;
}

/*
 * Forget the updates that lie within [off, off+len) of b, as if the
 * changes they record had never been made, when the range never reached
 * the disk: the oldest update over it made it from zeros, and is still
 * pending, and no epoch has failed (whose writes may have reached the
 * disk though their updates stayed pending).  (A file removed before its
 * inode was ever written: its data need not be written, nor its blocks
 * wait to be freed.)
 *
 * What waited for them must not be exposed by the forgetting: each such
 * update must lie on a block of type after_type (the caller knows what
 * those bytes say: a name of the file), so that any write image shows its
 * bytes either as they are now or as they were before it.  When a newer
 * update that may be undone lies over such a name (the name was renamed
 * away, or another file's name took its slot), an image that undid that
 * one would show the name as it was: then the name is forgotten too
 * (undo_past()), if it can be.  A whole-block copy-on-write hold over
 * the range stays.  Returns 1 when the updates are forgotten (the caller
 * then resets the bytes), 0 when not.
 */
int deps_forget_new(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len,
		    int after_type, uint32_t key)
{
	struct upd *over[FORGET_MAX], *names[FORGET_MAX], *u, *first = NULL;
	struct edge *e;
	unsigned n, i, nnames = 0;
	int r;

	/* after a failed epoch, pending does not mean not on disk */
	if (fs->mode != SUFS_MODE_SOFTDEP || fs->deps->failed || fs->deps->epoch_failed)
		return 0;
	n = updates_over(fs->deps, b, off, len, over, FORGET_MAX);
	if (n > FORGET_MAX)
		return 0; /* so many changes: let the rules order its zeroing */
	for (i = 0; i < n; i++) {
		u = over[i];
		if (u->kind == UPD_COPYONWRITE && u->off == 0 && u->len == fs->bsize) {
			over[i] = NULL;
			continue;
		}
		if (u->off < off || u->off + u->len > off + len || u->inflight)
			return 0;
		if (!first) {
			first = u;
			if (!u->zero_undo || u->off != off || u->len != len)
				return 0;
		}
		for (e = u->afters; e; e = e->next_after) {
			struct upd *x = e->after;
			if (lies_within(x, b, off, len))
				continue; /* forgotten too */
			if (x->b->type != after_type || x->inflight)
				return 0;
			/* x is undoable (it waited for u): newer spans come after */
			r = name_forgettable(fs->deps, x, b, off, len, key);
			if (r < 0 || (r > 0 && !add_name(names, &nnames, x)))
				return 0;
		}
	}
	if (!first)
		return 0;
	for (i = 0; i < nnames; i++) {
		undo_past(fs->deps, names[i], key, 1);
		deps_upd_free(fs, names[i]);
	}
	for (i = 0; i < n; i++)
		if (over[i])
			deps_upd_free(fs, over[i]);
	fs->deps->forgotten++;
	return 1;
}

/*
 * Take back the pending updates over [off, off+len) of b, as if the
 * changes they record had never been made: the range then holds what a
 * write of b with all of them undone would carry (for each byte, the old
 * byte of the oldest update over it; the bytes no update that may be
 * undone covers stay as they are, as every write carries them).  (A file
 * removed whose inode reached the disk, but whose newer block pointers
 * did not: with the pointers taken back, the blocks they named, which no
 * pointer on disk ever did, are free at once and their data never
 * written; inode_forget_blocks().)  Possible when no epoch has failed,
 * every update over the range lies within it, none is in flight, a
 * counter or awaited by deferred work (a pointer cleared by a truncate),
 * and whatever waits for one of them lies within the range too.  Puts
 * the range's bytes so taken back in out; with apply, also makes them the
 * buffer's and frees the updates.  Returns 1 when possible, else 0.
 */
int deps_take_back(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len,
		   uint8_t *out, int apply)
{
	struct upd *over[FORGET_MAX], *u;
	const struct edge *e;
	unsigned n, i;

	if (fs->mode != SUFS_MODE_SOFTDEP || fs->deps->failed || fs->deps->epoch_failed)
		return 0;
	n = updates_over(fs->deps, b, off, len, over, FORGET_MAX);
	if (n == 0 || n > FORGET_MAX)
		return 0;
	memcpy(out, b->data + off, len);
	for (i = n; i-- > 0;) { /* newest first: the oldest's old bytes stay */
		u = over[i];
		if (!lies_within(u, b, off, len) || u->inflight || u->counter || u->deferred ||
		    u->kind == UPD_COPYONWRITE)
			return 0;
		for (e = u->afters; e; e = e->next_after)
			if (!lies_within(e->after, b, off, len))
				return 0;
		if (u->undo)
			memcpy(out + (u->off - off), u->undo, u->len);
		else if (u->zero_undo)
			memset(out + (u->off - off), 0, u->len);
	}
	if (!apply)
		return 1;
	for (i = 0; i < n; i++)
		deps_upd_free(fs, over[i]);
	memcpy(b->data + off, out, len);
	fs->deps->forgotten++;
	return 1;
}

void waits_add(struct waits *w, upd_id id)
{
	unsigned i;

	if (!id)
		return;
	for (i = 0; i < w->n; i++)
		if (w->id[i] == id)
			return;
	assert(w->n < DEPS_MAX_WAITS); /* engine.h: no operation builds more */
	if (w->n < DEPS_MAX_WAITS)
		w->id[w->n++] = id;
}

static const char *const kind_names[] = {
	[UPD_BMSAFEMAP] = "bmsafemap", [UPD_INODEDEP] = "inodedep",
	[UPD_ALLOCDIRECT] = "allocdirect", [UPD_INDIRDEP] = "indirdep",
	[UPD_ALLOCINDIR] = "allocindir", [UPD_DIRADD] = "diradd", [UPD_MKDIR] = "mkdir",
	[UPD_DIRREM] = "dirrem", [UPD_FREEBLKS] = "freeblks", [UPD_FREEFILE] = "freefile",
	[UPD_DATA] = "data", [UPD_COPYONWRITE] = "copyonwrite", [UPD_EXTATTR] = "extattr",
};

const char *deps_kind_name(unsigned kind)
{
	return kind < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[kind] ?
		       kind_names[kind] : "unknown";
}

/* ---- invariants ---------------------------------------------------------------------- */

/* A broken invariant: -EFAULT, and what broke, for which update, in why. */
static int broken(char *why, size_t size, const struct upd *u, const char *what)
{
	if (why && size)
		snprintf(why, size, "%s (update %llu, block %llu, bytes %u-%u, %s)", what,
			 u ? (unsigned long long)u->id : 0ull,
			 u ? (unsigned long long)u->b->blk : 0ull, u ? u->off : 0,
			 u ? u->off + u->len : 0, u ? deps_kind_name(u->kind) : "-");
	return -EFAULT;
}

/* The cache's dirty list holds the dirty buffers, each once, and each the
 * only buffer of its block (else a write may miss its newest updates). */
static int check_dirty_list(struct sufs_fs *fs, char *why, size_t size)
{
	struct buf *b, **prev = &fs->cache.dirtylist;
	size_t count = 0;

	for (b = fs->cache.dirtylist; b; prev = &b->dnext, b = b->dnext)
		if (!b->dirty || b->dprev != prev || ++count > fs->cache.dirty ||
		    cache_lookup(fs, b->blk) != b)
			return broken(why, size, NULL, "the dirty list is not the dirty buffers, "
				      "each its block's only one");
	return count != fs->cache.dirty ? broken(why, size, NULL, "the dirty list is not "
						 "the dirty buffers") : 0;
}

/* One update's own invariants, and its block's lists and counts. */
static int check_update(struct sufs_fs *fs, struct upd *u, char *why, size_t size)
{
	struct deps *d = fs->deps;
	struct bdeps *x = bd(u->b);
	struct upd *o;
	struct edge *e;

	if (!u->b->dirty)
		return broken(why, size, u, "pending on a clean buffer");
	for (e = u->befores; e; e = e->next_before)
		if (e->before->id >= u->id)
			return broken(why, size, u, "(1) it waits for a newer update");
	if (!undoable(u) && u->befores)
		return broken(why, size, u, "(3) it waits but has no old bytes");
	if (u->counter && (u->undo || u->zero_undo || !u->len || u->len > 8))
		return broken(why, size, u, "a counter's change is not a delta of at most 8 bytes");
	if ((o = x->fold) != NULL && (o->b != u->b || undoable(o) || deps_find(fs, o->id) != o))
		return broken(why, size, o, "its block's fold target is not its own never-undone update");
	if (undoable(u) && (u->span >= x->nspans || x->spans[u->span].u != u ||
			    x->spans[u->span].off != u->off ||
			    x->spans[u->span].end != u->off + u->len))
		return broken(why, size, u, "its span is not where overlaps look");
	if (undoable(u) && x->gwords && !span_indexed(d, u->b, u->span))
		return broken(why, size, u, "the grain index does not lead to its span");
	if (u == x->upds) {
		size_t nu = 0, nundo = 0;
		for (o = u; o; o = o->bnext) {
			nu++;
			nundo += undoable(o);
		}
		if (nu != x->nupds || nundo != x->nundo)
			return broken(why, size, u, "its block's counts of updates are wrong");
	}
	for (o = x->upds; o != u; o = o->bnext) {
		if (!o)
			return broken(why, size, u, "it is not on its buffer's list");
		/* a newer update that is never undone can overlap an older one
		 * only where a merge widened the older one over it, keeping its
		 * bytes as the old ones: safe */
		if (!undoable(o) || !undoable(u) || !overlaps(o, u->off, u->len) || d->failed)
			continue;
		if (u->counter && same_counter(o, u->off, u->len))
			continue; /* two changes of one counter commute */
		for (e = u->befores; e && e->before != o; e = e->next_before)
			;
		if (!e)
			return broken(why, size, u, "(2) it overlaps an older undoable update "
				      "without waiting for it");
	}
	return 0;
}

/*
 * Check invariants (1)-(3) over every pending update ((2) only while
 * memory has never run out), the blocks' lists, spans and counts, the
 * sums, and that the cache's dirty list holds the dirty buffers, each
 * once.  0, or -EFAULT with what broke, for which update, in why.
 */
int deps_check(struct sufs_fs *fs, char *why, size_t size)
{
	struct deps *d = fs->deps;
	struct upd *u;
	size_t i, count = 0;
	int err = check_dirty_list(fs, why, size);

	for (i = 0; i < d->nhash && !err; i++)
		for (u = d->hash[i]; u && !err; u = u->hnext, count++)
			err = check_update(fs, u, why, size);
	if (!err && count != d->pending)
		err = broken(why, size, NULL, "the count of pending updates is wrong");
	if (!err && d->mem != mem_sum(d))
		err = broken(why, size, NULL, "the sum of the engine's memory is wrong");
	return err;
}

/* ---- setting up, tearing down ------------------------------------------------------ */

int deps_init(struct sufs_fs *fs, int (*order_lost)(struct sufs_fs *fs))
{
	struct deps *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->grain_shift = fs->bshift - DEPS_GRAIN_BITS;
	d->order_lost = order_lost;
	fs->deps = d;
	return 0;
}

size_t deps_buf_extra(void)
{
	return sizeof(struct bdeps);
}

void deps_destroy(struct sufs_fs *fs)
{
	struct deps *d = fs->deps;
	struct deferred *w, *next;
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nhash; i++)
		while (d->hash[i])
			deps_upd_free(fs, d->hash[i]);
	for (w = d->deferred; w; w = next) {
		next = w->next;
		w->fn(NULL, w->arg); /* dropped, not run: it frees its argument */
		free(w);
	}
	pool_drain(&d->edge_pool);
	pool_drain(&d->upd_pool);
	free(d->hash);
	free(d->stage);
	free(d->notes);
	free(d);
	fs->deps = NULL;
}
