/*
 * query.c - what the layers above may ask of the dependency engine:
 * whether updates are pending (over a byte range, of a kind, by id), notes
 * filed under keys, and its counters.  Nothing
 * here changes what is pending.
 */
#include "config.h"
#include "deps_priv.h"

#include <errno.h>
#include <stdlib.h>

int deps_is_pending(struct sufs_fs *fs, upd_id id)
{
	return deps_find(fs, id) != NULL;
}

int deps_block_pending(const struct buf *b)
{
	return bd(b)->upds != NULL;
}

upd_id deps_last_over(const struct buf *b, uint32_t off, uint32_t len)
{
	const struct upd *u;

	for (u = bd(b)->ulast; u; u = u->bprev) /* newest first */
		if (overlaps(u, off, len))
			return u->id;
	return 0;
}

/*
 * Does u wait for an update of kinds on another block, directly or through
 * updates of its own block of one of through (a removal of a name made in
 * a slot passed over waits, through the older removal there, for that
 * one's new name elsewhere, though its own was forgotten)?  At most
 * *budget updates are read: past that the answer is yes, which only costs
 * a slot.
 */
static int waits_outside(const struct upd *u, const struct buf *b, unsigned kinds,
			 unsigned through, unsigned *budget)
{
	const struct edge *e;

	if (*budget == 0)
		return 1;
	--*budget;
	for (e = u->befores; e; e = e->next_before)
		if (e->before->b != b && (kinds & DEPS_KIND(e->before->kind)))
			return 1;
	for (e = u->befores; e; e = e->next_before)
		if (e->before->b == b && (through & DEPS_KIND(e->before->kind)) &&
		    waits_outside(e->before, b, kinds, through, budget))
			return 1;
	return 0;
}

int deps_waits_over(struct sufs_fs *fs, const struct buf *b, uint32_t off, uint32_t len,
		    unsigned kinds, unsigned through)
{
	const struct uspan *sp;
	struct span_iter it;
	unsigned budget = 32;

	span_first(&it, fs->deps, b, off, len); /* the updates that may be undone */
	while ((sp = span_next(&it)) != NULL)
		if (waits_outside(sp->u, b, kinds, through, &budget))
			return 1;
	return 0;
}

upd_id deps_pending_kind(const struct buf *b, enum upd_kind kind)
{
	const struct upd *u;

	for (u = bd(b)->upds; u; u = u->bnext)
		if (u->kind == kind)
			return u->id;
	return 0;
}

int deps_collect(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len,
		 unsigned kinds, deps_collect_fn fn, void *arg)
{
	struct deps *d = fs->deps;
	struct upd *u;
	size_t i;
	int rc = 0;

	if (b) {
		for (u = bd(b)->upds; u && !rc; u = u->bnext)
			if (overlaps(u, off, len))
				rc = fn(arg, b, u->off, u->len, u->id);
		return rc;
	}
	for (i = 0; i < d->nhash && !rc; i++)
		for (u = d->hash[i]; u && !rc; u = u->hnext)
			if (kinds & DEPS_KIND(u->kind))
				rc = fn(arg, u->b, u->off, u->len, u->id);
	return rc;
}

/* ---- notes ---------------------------------------------------------------------------- */

/* Drop the notes whose updates are no longer pending. */
static void notes_prune(struct sufs_fs *fs)
{
	struct deps *d = fs->deps;
	size_t i = 0;

	while (i < d->nnotes) {
		if (!deps_find(fs, d->notes[i].id))
			d->notes[i] = d->notes[--d->nnotes];
		else
			i++;
	}
}

int deps_note(struct sufs_fs *fs, uint64_t key, upd_id id)
{
	struct deps *d = fs->deps;

	if (!deps_find(fs, id))
		return 0; /* on disk already: nothing to wait for */
	if (d->nnotes == d->capnotes) {
		size_t cap;
		struct note *p;

		notes_prune(fs);
		cap = d->capnotes ? 2 * d->capnotes : 16;
		if (d->nnotes < d->capnotes / 2)
			cap = d->capnotes;
		if (cap != d->capnotes) {
			p = realloc(d->notes, cap * sizeof(*p));
			if (!p)
				return -ENOMEM;
			d->notes = p;
			d->capnotes = cap;
		}
	}
	d->notes[d->nnotes++] = (struct note){ key, id };
	return 0;
}

upd_id deps_noted(struct sufs_fs *fs, uint64_t key)
{
	struct deps *d = fs->deps;
	upd_id newest = 0;
	size_t i;

	notes_prune(fs);
	for (i = 0; i < d->nnotes; i++)
		if (d->notes[i].key == key && d->notes[i].id > newest)
			newest = d->notes[i].id;
	return newest;
}

int deps_noted_all(struct sufs_fs *fs, uint64_t key, upd_id **ids, size_t *n)
{
	struct deps *d = fs->deps;
	size_t i, cnt = 0;

	*ids = NULL;
	*n = 0;
	notes_prune(fs);
	for (i = 0; i < d->nnotes; i++)
		cnt += d->notes[i].key == key;
	if (!cnt)
		return 0;
	*ids = malloc(cnt * sizeof(**ids));
	if (!*ids)
		return -ENOMEM;
	for (i = 0; i < d->nnotes; i++)
		if (d->notes[i].key == key)
			(*ids)[(*n)++] = d->notes[i].id;
	return 0;
}

/* ---- counters ------------------------------------------------------------------------ */

uint64_t deps_pending_count(struct sufs_fs *fs)
{
	return fs->deps->pending;
}

int deps_deferred_work(struct sufs_fs *fs)
{
	return fs->deps->ndeferred != 0;
}

int deps_order_was_lost(struct sufs_fs *fs)
{
	return fs->deps->failed;
}

void deps_get_stats(struct sufs_fs *fs, struct sufs_stats *st)
{
	const struct deps *d = fs->deps;

	st->epochs = d->epochs;
	st->updates = d->created;
	st->merged = d->merged;
	st->undone = d->undone;
	st->pending = d->pending;
	st->peak_pending = d->peak_pending;
	st->dep_bytes = d->mem;
	st->peak_dep_bytes = d->peak_mem;
	st->undo_bytes = d->undo_bytes;
	st->peak_undo_bytes = d->peak_undo;
	st->deferred = d->ndeferred;
	st->forgotten = d->forgotten;
	st->waits = d->waits;
}
