/*
 * epoch.c - the dependency engine's writes: deferred work, epochs, drains
 * and flushes of a chosen set (deps.c defines the terms).
 */
#include "config.h"
#include "deps_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Run deferred work whose updates are all on disk. */
int deps_run_deferred(struct sufs_fs *fs)
{
	struct deps *d = fs->deps;
	struct deferred **pp = &d->deferred, *w;
	unsigned i;
	int err = 0, ready;

	/* deferred work may fill the cache and so write back: an epoch run
	 * from inside it leaves the list to this loop */
	if (d->running_deferred)
		return 0;
	d->running_deferred = 1;

	while ((w = *pp) != NULL) {
		ready = 1;
		for (i = 0; i < w->nwaits && ready; i++)
			if (deps_find(fs, w->waits[i]))
				ready = 0;
		if (!ready) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		d->ndeferred--;
		if (!err)
			err = w->fn(fs, w->arg);
		else
			w->fn(fs, w->arg);
		/* *pp is w's successor or, when w was at the head, work that
		 * fn deferred meanwhile (added at the head): looked at next */
		free(w);
	}
	d->running_deferred = 0;
	return err;
}

/*
 * Run fn(fs, arg) once every update in waits is on disk: at once when they
 * all are (and always in async mode).  fn owns arg; fn(NULL, arg) means the
 * work is dropped (the file system is abandoned, or no memory was left to
 * remember the work: -ENOMEM, and what it would have freed is leaked) and
 * only frees arg.
 */
int deps_defer(struct sufs_fs *fs, const upd_id *waits, unsigned nwaits,
	       int (*fn)(struct sufs_fs *, void *), void *arg)
{
	struct deps *d = fs->deps;
	struct deferred *w;
	unsigned i, n = 0;

	w = malloc(sizeof(*w) + nwaits * sizeof(upd_id));
	if (!w) {
		fn(NULL, arg);
		return -ENOMEM;
	}
	for (i = 0; i < nwaits; i++) {
		struct upd *u = deps_find(fs, waits[i]);
		if (u) {
			u->deferred = 1;
			w->waits[n++] = waits[i];
		}
	}
	if (n == 0 || fs->broken_rule == 2) {
		free(w);
		return fn(fs, arg);
	}
	w->nwaits = n;
	w->fn = fn;
	w->arg = arg;
	w->next = d->deferred;
	d->deferred = w;
	d->ndeferred++;
	return 0;
}

/* ---- epochs ---------------------------------------------------------------------------- */

static int cmp_blk(const void *a, const void *b)
{
	uint64_t x = (*(struct buf *const *)a)->blk, y = (*(struct buf *const *)b)->blk;
	return x < y ? -1 : x > y;
}

#define RUN_MAX 256

/*
 * Ask the processor for the records of the block two places ahead in
 * list, and for the block four places ahead, while this one is worked on:
 * an epoch's walks go from block to block in list's order, and a block's
 * records were made long before, so each walk would otherwise wait for
 * memory at every block.
 */
static void prefetch_ahead(struct buf **list, size_t i, size_t n)
{
	if (i + 4 < n && list[i + 4])
		__builtin_prefetch(bd(list[i + 4]));
	if (i + 2 < n && list[i + 2] && bd(list[i + 2])->upds)
		__builtin_prefetch(bd(list[i + 2])->upds);
}

/* The updates in b's write image are in flight (on: as deps_image() just
 * decided), or none is (the write failed). */
static void set_inflight(struct buf *b, int on)
{
	struct upd *u;

	for (u = bd(b)->upds; u; u = u->bnext)
		u->inflight = on && u->included;
}

/*
 * A run of consecutive blocks goes out in one write call; on a disk each
 * call costs a seek or a command, each block only its bytes.  So a short
 * gap in a run (FILL_MAX blocks at most) is filled: with the dirty blocks
 * that sit in it, though they have nothing to write now (every update
 * waits) or the epoch does not want them, written as their write images
 * (safe at any time, invariant (4)); and with clean blocks of the data
 * area that the cache holds, which are on disk as they are in memory.
 * Each costs a block write and saves a call.  Not in a flush of a chosen
 * set (fsync writes what its file needs), nor with a block whose image
 * found no memory for its order.
 */
#define FILL_MAX 4

/*
 * Can the gap [blk, blk + len) of a run be filled with clean blocks the
 * cache holds?  Then they are copied, sealed, to out.  Only blocks of the
 * data area: every change of one goes through the cache, so a clean one
 * is on disk as it is in memory (the superblock and the group descriptors
 * go out on their own path, super.c).  And none in use: an operation may
 * hold a new block's buffer, zeros not yet announced as its change.
 */
static int fill_clean(struct sufs_fs *fs, uint64_t blk, uint64_t len, uint8_t *out)
{
	struct buf *c;
	uint64_t k;

	for (k = 0; k < len; k++) {
		c = cache_lookup(fs, blk + k);
		if (!c || c->dirty || c->refs ||
		    (c->type != BUF_DATA && c->type != BUF_DIR && c->type != BUF_IND &&
		     c->type != BUF_XATTR))
			return 0;
	}
	for (k = 0; k < len; k++) {
		c = cache_lookup(fs, blk + k);
		memcpy(out + k * fs->bsize, c->data, fs->bsize);
		cache_seal(fs, c, out + k * fs->bsize);
	}
	return 1;
}

/*
 * Gather the run of consecutive blocks from list[i], a wanted block with
 * something it may write, filling short gaps (fill): the write image of
 * each into the staging area, sealed, its updates in flight.  Returns how
 * many of the list's blocks the run holds (0 when list[i] has nothing to
 * write now), and in *nblk how many blocks it writes, clean ones
 * included.
 */
static size_t gather_run(struct sufs_fs *fs, struct buf **list, size_t i, size_t n, int fill,
			 size_t *nblk, int *nomem)
{
	uint8_t *stage = fs->deps->stage;
	size_t run, keep = 0, at = 0, kept_at = 0, fillers = 0, gap;
	unsigned undone, carried;
	struct buf *b;
	int filler;

	*nblk = 0;
	if (!bd(list[i])->wanted)
		return 0; /* only ever a filler */
	for (run = 0; i + run < n && at < RUN_MAX; run++) {
		b = list[i + run];
		prefetch_ahead(list, i + run, n);
		gap = (size_t)(b->blk - (list[i]->blk + at));
		if (gap && (!fill || fillers + gap > FILL_MAX || at + gap >= RUN_MAX ||
			    !fill_clean(fs, b->blk - gap, gap, stage + at * fs->bsize)))
			break;
		carried = deps_image(fs, b, stage + (at + gap) * fs->bsize, &undone);
		*nomem |= carried == (unsigned)-1;
		if (carried == (unsigned)-1)
			break;
		/* a block whose updates must all wait goes out later, with
		 * them (its plain changes, times and counts, can wait too),
		 * unless it fills a gap */
		filler = !bd(b)->wanted || (!carried && bd(b)->upds);
		if (filler && (run == 0 || !fill || fillers + gap == FILL_MAX))
			break;
		at += gap;
		fillers = filler ? fillers + gap + 1 : 0;
		cache_seal(fs, b, stage + at * fs->bsize);
		bd(b)->undone_in_write = undone;
		/* its updates are in flight: freed after the barrier
		 * (deps_mark_on_disk()), back to pending if the epoch fails */
		set_inflight(b, 1);
		if (!filler) {
			keep = run + 1;
			kept_at = at + 1;
		}
		at++;
	}
	/* fillers at the end of a run fill no gap: they stay */
	while (run > keep)
		set_inflight(list[i + --run], 0);
	*nblk = kept_at;
	return keep;
}

/*
 * One epoch: write the write image of every buffer that wants writing and
 * has something it may write, one barrier, then mark what went out as on
 * disk and run the deferred work that became ready.  want(b) selects the
 * buffers (NULL: every dirty one); fill lets the gaps of a run be filled
 * (above).  Returns the number of blocks written, or a negative error:
 * -ENOMEM when nothing could be written because a write image found no
 * memory for its order.
 */
static int epoch(struct sufs_fs *fs, int (*want)(struct sufs_fs *, struct buf *, void *),
		 void *arg, int barrier, int fill)
{
	struct cache *c = &fs->cache;
	struct buf **list, *b;
	uint8_t *stage;
	size_t n = 0, i, run, k, nblk, written = 0;
	int err = 0, nomem = 0;

	if (!c->dirty)
		return deps_run_deferred(fs);
	/* memory ran out: what goes out now may be out of order, and the
	 * image must say so first */
	if (fs->deps->failed && fs->deps->order_lost && (err = fs->deps->order_lost(fs)) != 0)
		return err;
	/* the staging area is kept from epoch to epoch: a fresh one would
	 * cost a page fault for each of its pages at every epoch; aligned to
	 * a page, so that a device opened with O_DIRECT takes it as it is */
	if (!fs->deps->stage &&
	    posix_memalign((void **)&fs->deps->stage, 4096, (size_t)RUN_MAX * fs->bsize))
		fs->deps->stage = NULL;
	stage = fs->deps->stage;
	list = malloc(c->dirty * sizeof(*list));
	if (!list || !stage) {
		free(list);
		return -ENOMEM;
	}
	/* the blocks wanted, and (to fill gaps) the others, in block order;
	 * each buffer's scratch mark says which */
	for (b = c->dirtylist; b; b = b->dnext) {
		bd(b)->wanted = !want || want(fs, b, arg);
		if (bd(b)->wanted || fill)
			list[n++] = b;
	}
	qsort(list, n, sizeof(*list), cmp_blk);
	for (i = 0; i < n && !err; i += run) {
		run = gather_run(fs, list, i, n, fill, &nblk, &nomem);
		if (run == 0) {
			list[i] = NULL; /* nothing to write for it now */
			run = 1;
			continue;
		}
		err = sufs_dev_write(fs->dev, list[i]->blk << fs->bshift, stage, nblk * fs->bsize);
		if (err) {
			for (k = 0; k < run; k++)
				set_inflight(list[i + k], 0);
			break;
		}
		for (k = 0; k < run; k++) {
			b = list[i + k];
			bd(b)->written = 1;
			if (fs->trace)
				fs->trace(fs, b, fs->trace_arg);
		}
		written += nblk;
		fs->stats.block_writes += nblk;
	}
	if (!err && written && barrier)
		err = sufs_dev_barrier(fs->dev);
	if (err)
		fs->deps->epoch_failed = 1; /* a failed write may have gone in part */
	/* invariant (5): only now, after the barrier, is anything on disk; a
	 * failed epoch leaves every block dirty and every update pending */
	for (i = 0; i < n; i++) {
		prefetch_ahead(list, i, n);
		b = list[i];
		if (!b || !bd(b)->written)
			continue;
		bd(b)->written = 0;
		if (err) {
			set_inflight(b, 0);
			continue;
		}
		b->plain = 0;
		fs->deps->undone += bd(b)->undone_in_write;
		if (!bd(b)->undone_in_write)
			cache_set_clean(fs, b);
		deps_mark_on_disk(fs, b);
	}
	if (!err) {
		fs->deps->epochs += written && barrier ? 1 : 0;
		fs->last_epoch = now_seconds_mono();
		err = deps_run_deferred(fs);
	}
	free(list);
	if (!err && !written && nomem)
		err = -ENOMEM;
	return err < 0 ? err : (int)written;
}

int deps_epoch(struct sufs_fs *fs, int (*want)(struct sufs_fs *, struct buf *, void *),
	       void *arg, int barrier)
{
	return epoch(fs, want, arg, barrier, 1);
}

/* ---- flushing a chosen set ------------------------------------------------------ */

static int cmp_id(const void *a, const void *b)
{
	upd_id x = *(const upd_id *)a, y = *(const upd_id *)b;
	return x < y ? -1 : x > y;
}

struct idset {
	upd_id *id;
	size_t n;
};

static int in_set(const struct idset *s, upd_id id)
{
	return bsearch(&id, s->id, s->n, sizeof(upd_id), cmp_id) != NULL;
}

static int want_set(struct sufs_fs *fs, struct buf *b, void *arg)
{
	const struct upd *u;
	(void)fs;
	for (u = bd(b)->upds; u; u = u->bnext)
		if (in_set(arg, u->id))
			return 1;
	return 0;
}

/*
 * Make the given updates, and everything they wait for, durable: epochs
 * that write only the blocks carrying some of them (fsync, sync mode).
 * ids is scratch: it may be reallocated and is freed here.
 */
int deps_flush_set(struct sufs_fs *fs, upd_id *ids, size_t n)
{
	struct idset set;
	size_t cap = n, i, live;
	struct upd *u;
	struct edge *e;
	int err = 0;

	/* the closure over what they wait for, each update once (seen marks
	 * those in the list; befores are older and live) */
	for (i = live = 0; i < n; i++) {
		u = deps_find(fs, ids[i]);
		if (u && !u->seen) {
			u->seen = 1;
			ids[live++] = ids[i];
		}
	}
	for (n = live, i = 0; i < n && !err; i++) {
		u = deps_find(fs, ids[i]);
		for (e = u->befores; e && !err; e = e->next_before) {
			if (e->before->seen)
				continue;
			if (n == cap) {
				upd_id *p = realloc(ids, (cap = cap * 2 + 16) * sizeof(*ids));
				if (!p) {
					err = -ENOMEM;
					break;
				}
				ids = p;
			}
			e->before->seen = 1;
			ids[n++] = e->before->id;
		}
	}
	for (i = 0; i < n; i++)
		deps_find(fs, ids[i])->seen = 0;
	if (err) {
		free(ids);
		return err;
	}
	qsort(ids, n, sizeof(*ids), cmp_id);
	live = n;
	set.id = ids;
	set.n = live;
	while (!err) {
		for (i = 0; i < set.n && !deps_find(fs, set.id[i]); i++)
			;
		if (i == set.n)
			break;
		err = epoch(fs, want_set, &set, 1, 0);
		if (err == 0)
			err = -EIO; /* cannot happen: the oldest of the set is allowed */
		else if (err > 0)
			err = 0;
	}
	free(ids);
	return err;
}

/*
 * What of b may go now: the greatest height (below) of an update of b that
 * another update or deferred work waits for and that is allowed in a
 * write of b now, or -1; and whether all of b may go, with one such
 * update.  (u->included is deps_image()'s scratch: it sets it again when
 * it builds the image.)
 */
static int block_ready(struct buf *b, int *whole)
{
	struct upd *u;
	int top = -1, all = 1;

	for (u = bd(b)->upds; u; u = u->bnext) { /* oldest first: befores first */
		u->included = (uint8_t)deps_allowed(u);
		all &= u->included;
		if (u->included && (u->afters || u->deferred) && u->height > top)
			top = u->height;
	}
	*whole = all && top >= 0;
	return top;
}

static int cmp_id_desc(const void *a, const void *b)
{
	upd_id x = (*(struct upd *const *)a)->id, y = (*(struct upd *const *)b)->id;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Each pending update's height: how many block writes must follow its
 * own, along the longest chain of waits from it (a wait by an update on
 * another block is one; one on the same block, which the same write may
 * carry, none; deferred work is one, for the bitmap its frees change).
 * Updates wait only for older ones, so newest first each update's waiters
 * are done before it.  Heights stay true while the drain runs: what waits
 * for an update stays pending until it is on disk.  Without memory for
 * the order, every height is 0 (the drain then writes what it may at
 * once).
 */
static void heights(struct sufs_fs *fs)
{
	struct deps *d = fs->deps;
	struct upd **all, *u;
	const struct edge *e;
	size_t n = 0, i;
	unsigned h, x;

	all = malloc(d->pending * sizeof(*all));
	for (i = 0; i < d->nhash; i++)
		for (u = d->hash[i]; u; u = u->hnext) {
			u->height = 0;
			if (all && (u->afters || u->deferred))
				all[n++] = u; /* the rest stay 0 */
		}
	if (!all)
		return;
	qsort(all, n, sizeof(*all), cmp_id_desc);
	for (i = 0; i < n; i++) {
		u = all[i];
		h = u->deferred;
		for (e = u->afters; e; e = e->next_after) {
			x = e->after->height + (e->after->b != u->b);
			h = x > h ? x : h;
		}
		u->height = (uint8_t)(h < UINT8_MAX ? h : UINT8_MAX);
	}
	free(all);
}

/* The greatest height of an awaited update that may go now, or -1; each
 * dirty block's own answer is kept for want_drain(), which the epoch asks
 * next, before anything changes. */
static int ready_top(struct sufs_fs *fs)
{
	struct buf *b;
	int top = -1, h, whole;

	for (b = fs->cache.dirtylist; b; b = b->dnext) {
		if (b->dnext && bd(b->dnext)->upds)
			__builtin_prefetch(bd(b->dnext)->upds); /* as prefetch_ahead() */
		h = block_ready(b, &whole);
		bd(b)->ready_top = (int16_t)h;
		bd(b)->ready_whole = (uint8_t)whole;
		if (h > top)
			top = h;
	}
	return top;
}

/*
 * The drain's choice: a block that may go whole, or one that carries an
 * awaited update which may go now and starts a longest chain of what is
 * left (its height is the greatest, arg).  Another block with an awaited
 * update that may go is held back one epoch, for more of its updates to
 * become free to go with it (written now, it would be written again for
 * them), then goes: it is not on a longest chain, so the wait costs no
 * epoch.  So the drain takes as many epochs as the longest chain has
 * links, no more.  (Holding blocks on a longest chain too, as the drain
 * once did, saved a few writes in small mixes, at up to twice the epochs;
 * holding the others longer, until their own chains made them go, wrote
 * more: a block's updates of neighbouring levels then went apart.)
 */
static int want_drain(struct sufs_fs *fs, struct buf *b, void *arg)
{
	int whole = bd(b)->ready_whole, h = bd(b)->ready_top;

	(void)fs;
	if (whole || h >= *(const int *)arg || (h >= 0 && bd(b)->held)) {
		bd(b)->held = 0;
		return 1;
	}
	if (h >= 0)
		bd(b)->held = 1;
	return 0;
}

/*
 * Write epochs until nothing is dirty and no work is deferred.  While some
 * update that others (or deferred work) wait for may go, an epoch writes
 * only the blocks want_drain() picks; when none is waited for, an epoch
 * writes everything it may.
 */
int deps_drain(struct sufs_fs *fs)
{
	int n, top;

	if (fs->deps->edges || fs->deps->ndeferred)
		heights(fs);
	while (fs->cache.dirty || fs->deps->ndeferred) {
		n = 0;
		/* with no wait left (no edge, no deferred work), none is
		 * awaited: skip the search, which reads every record */
		if ((fs->deps->edges || fs->deps->ndeferred) && (top = ready_top(fs)) >= 0)
			n = deps_epoch(fs, want_drain, &top, 1);
		if (n == 0)
			n = deps_epoch(fs, NULL, NULL, 1);
		if (n < 0)
			return n;
		if (n == 0 && fs->cache.dirty)
			return -EIO; /* cannot happen: the oldest update is always allowed */
	}
	return 0;
}

/*
 * Write every update deferred work waits for, with what those wait for,
 * and run the work (an allocation found no room: the frees it waits for
 * may make some).  Work that the running defers again (a freed block a
 * snapshot's copy still holds) is left for the next call.
 */
int deps_flush_deferred(struct sufs_fs *fs)
{
	struct deps *d = fs->deps;
	uint64_t before = d->ndeferred;
	struct deferred *w;
	size_t n = 0, cap = 0;
	upd_id *ids = NULL, *p;
	unsigned i;
	int err;

	if (!before || d->running_deferred)
		return 0;
	for (w = d->deferred; w; w = w->next) {
		for (i = 0; i < w->nwaits; i++) {
			if (n == cap) {
				cap = cap * 2 + 64;
				p = realloc(ids, cap * sizeof(*ids));
				if (!p) {
					free(ids);
					return -ENOMEM;
				}
				ids = p;
			}
			ids[n++] = w->waits[i];
		}
	}
	err = deps_flush_set(fs, ids, n); /* frees ids */
	if (!err)
		err = deps_run_deferred(fs);
	if (err)
		return err;
	return d->ndeferred < before ? 1 : 0;
}
