/*
 * walk.c - the dependency engine as tools see it: sufs_deps_walk() hands
 * out each dirty block with its pending updates, sufs_deps_flush() writes
 * one epoch and says what each write carried (sufs-debug's deps, why and
 * flush).
 */
#include "config.h"
#include "deps_priv.h"

#include <errno.h>
#include <stdlib.h>

/* Scratch for describing one block's updates, grown as needed. */
struct report {
	struct sufs_dep *deps;
	size_t cap;
	uint64_t *waits;
	size_t wcap;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	void *q;

	if (need <= *cap)
		return 0;
	q = realloc(*p, need * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = need;
	return 0;
}

static int cmp_blk(const void *a, const void *b)
{
	uint64_t x = (*(struct buf *const *)a)->blk, y = (*(struct buf *const *)b)->blk;
	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Describe b and its updates and hand them to fn.  At rest (flushed 0) an
 * update's state is whether the next write image carries it; just after a
 * write (flushed 1) whether that write did.
 */
static int report_block(struct report *r, struct buf *b, int flushed, sufs_deps_fn fn,
			void *arg)
{
	struct sufs_dep_block db;
	const struct edge *e;
	struct upd *u;
	size_t n = 0, nw = 0, i = 0, k = 0;

	for (u = bd(b)->upds; u; u = u->bnext) {
		n++;
		for (e = u->befores; e; e = e->next_before)
			nw++;
		if (!flushed)
			u->included = (uint8_t)deps_allowed(u); /* older ones first: see deps_allowed() */
	}
	/* one more than needed: never a NULL array, even when empty */
	if (grow((void **)&r->deps, &r->cap, n + 1, sizeof(*r->deps)) ||
	    grow((void **)&r->waits, &r->wcap, nw + 1, sizeof(*r->waits)))
		return -ENOMEM;
	for (u = bd(b)->upds; u; u = u->bnext, i++) {
		struct sufs_dep *d = &r->deps[i];
		d->id = u->id;
		d->kind = deps_kind_name(u->kind);
		d->off = u->off;
		d->len = u->len;
		if (flushed)
			d->state = u->inflight ? SUFS_DEP_WRITTEN : SUFS_DEP_UNDONE;
		else
			d->state = u->included ? SUFS_DEP_READY : SUFS_DEP_BLOCKED;
		d->undoable = undoable(u);
		d->undo_bytes = u->undo ? u->len : 0;
		d->delta = u->counter ? u->delta : 0;
		d->waits = r->waits + k;
		d->nwaits = 0;
		for (e = u->befores; e; e = e->next_before)
			r->waits[k + d->nwaits++] = e->before->id;
		if (d->nwaits > 1)
			qsort(r->waits + k, d->nwaits, sizeof(*r->waits), cmp_u64);
		k += d->nwaits;
	}
	db.blk = b->blk;
	db.type = buf_type_name(b->type);
	db.plain = b->plain;
	db.ndeps = n;
	db.deps = r->deps;
	return fn(arg, &db);
}

int sufs_deps_walk(struct sufs_fs *fs, uint64_t blk, sufs_deps_fn fn, void *arg)
{
	struct cache *c = &fs->cache;
	struct report r = { NULL, 0, NULL, 0 };
	struct buf **list, *b;
	size_t n = 0, i;
	int rc = 0;

	if (blk != SUFS_DEPS_ALL) {
		b = cache_lookup(fs, blk);
		if (b && b->dirty)
			rc = report_block(&r, b, 0, fn, arg);
		free(r.deps);
		free(r.waits);
		return rc;
	}
	list = malloc((c->dirty + 1) * sizeof(*list));
	if (!list)
		return -ENOMEM;
	for (b = c->dirtylist; b; b = b->dnext)
		list[n++] = b;
	qsort(list, n, sizeof(*list), cmp_blk);
	for (i = 0; i < n && !rc; i++)
		rc = report_block(&r, list[i], 0, fn, arg);
	free(list);
	free(r.deps);
	free(r.waits);
	return rc;
}

struct flush_view {
	struct report r;
	sufs_deps_fn fn;
	void *arg;
	int err;
};

/* fs->trace during sufs_deps_flush: each block as it is written */
static void flush_trace(struct sufs_fs *fs, struct buf *b, void *arg)
{
	struct flush_view *v = arg;
	int err;

	(void)fs;
	err = report_block(&v->r, b, 1, v->fn, v->arg);
	if (err < 0 && !v->err)
		v->err = err;
}

int sufs_deps_flush(struct sufs_fs *fs, sufs_deps_fn fn, void *arg)
{
	struct flush_view v = { { NULL, 0, NULL, 0 }, fn, arg, 0 };
	void (*trace)(struct sufs_fs *, struct buf *, void *) = fs->trace;
	void *trace_arg = fs->trace_arg;
	int n;

	if (!(fs->flags & SUFS_OPEN_RDWR))
		return -EROFS;
	if (fn) {
		fs->trace = flush_trace;
		fs->trace_arg = &v;
	}
	n = deps_epoch(fs, NULL, NULL, fs->mode != SUFS_MODE_ASYNC);
	fs->trace = trace;
	fs->trace_arg = trace_arg;
	free(v.r.deps);
	free(v.r.waits);
	return n < 0 ? n : v.err ? v.err : n;
}
