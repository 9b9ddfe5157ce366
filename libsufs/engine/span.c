/*
 * span.c - the spans of a block's undoable updates, and their index.
 *
 * Each update that may be undone keeps its byte range in an array of its
 * block (struct uspan, oldest first), so that the search for the updates
 * over a range reads memory in order.  Once a block has many spans (a big
 * directory's block, its entries all pending), an index keeps the search
 * short: for each 64th of the block (a grain: 64 bytes of a 4 KiB block, a
 * few short names), a bit per span that lies over it.  A bit may stay
 * after its span went (span_hits() decides); a span always has the bits
 * of the grains it covers (deps_check() asks span_indexed()).  The search
 * itself, span_first() and span_next(), is inline in deps_priv.h: it is
 * on the path of every change.
 */
#include "config.h"
#include "deps_priv.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define INDEX_MIN 16    /* spans before a block is indexed */

/* the blocks' span arrays and their indexes, in the engine's memory */
static void account_spans(struct deps *d, long bytes)
{
	d->span_bytes += bytes;
	d->mem += bytes;
	if (bytes > 0)
		deps_peaks(d);
}

static void grains_mark(const struct deps *d, struct buf *b, uint32_t i)
{
	uint32_t g, g0, g1;

	grains_of(d, bd(b)->spans[i].off, bd(b)->spans[i].end, &g0, &g1);
	for (g = g0; g <= g1; g++)
		bd(b)->grains[g * bd(b)->gwords + i / 64] |= 1ull << (i % 64);
}

/* Does the index have span i's bit in every grain the span lies over? */
int span_indexed(const struct deps *d, const struct buf *b, uint32_t i)
{
	uint32_t g, g0, g1;

	grains_of(d, bd(b)->spans[i].off, bd(b)->spans[i].end, &g0, &g1);
	for (g = g0; g <= g1; g++)
		if (!(bd(b)->grains[g * bd(b)->gwords + i / 64] & (1ull << (i % 64))))
			return 0;
	return 1;
}

static void grains_free(struct deps *d, struct buf *b)
{
	account_spans(d, -(long)(DEPS_GRAINS * bd(b)->gwords * sizeof(*bd(b)->grains)));
	free(bd(b)->grains);
	bd(b)->grains = NULL;
	bd(b)->gwords = 0;
}

/* (Re)build the index of b's spans, sized for its capacity; without
 * memory, or with few spans, the search scans the spans instead. */
static void grains_build(struct deps *d, struct buf *b)
{
	uint32_t i, words = (bd(b)->capspans + 63) / 64;

	grains_free(d, b);
	if (bd(b)->nspans < INDEX_MIN)
		return;
	bd(b)->grains = calloc((size_t)DEPS_GRAINS * words, sizeof(*bd(b)->grains));
	if (!bd(b)->grains)
		return;
	bd(b)->gwords = words;
	account_spans(d, (long)(DEPS_GRAINS * words * sizeof(*bd(b)->grains)));
	for (i = 0; i < bd(b)->nspans; i++)
		if (bd(b)->spans[i].u)
			grains_mark(d, b, i);
}

int span_add(struct deps *d, struct buf *b, struct upd *u)
{
	if (bd(b)->nspans == bd(b)->capspans) {
		uint32_t cap = bd(b)->capspans ? 2 * bd(b)->capspans : 16;
		struct uspan *p = realloc(bd(b)->spans, cap * sizeof(*p));
		if (!p) {
			u->span = UINT32_MAX; /* d->failed: no ordering is promised */
			return -ENOMEM;
		}
		account_spans(d, (long)((cap - bd(b)->capspans) * sizeof(*p)));
		bd(b)->spans = p;
		bd(b)->capspans = cap;
	}
	u->span = bd(b)->nspans;
	bd(b)->spans[bd(b)->nspans++] = (struct uspan){ u->off, u->off + u->len, u };
	if (bd(b)->gwords ? bd(b)->gwords * 64 < bd(b)->capspans : bd(b)->nspans >= INDEX_MIN)
		grains_build(d, b);
	else if (bd(b)->gwords)
		grains_mark(d, b, u->span);
	return 0;
}

/* u's range changed (a merge widened it) */
void span_set(struct deps *d, struct upd *u)
{
	if (u->span == UINT32_MAX)
		return;
	bd(u->b)->spans[u->span].off = u->off;
	bd(u->b)->spans[u->span].end = u->off + u->len;
	if (bd(u->b)->gwords)
		grains_mark(d, u->b, u->span);
}

/* u goes: its span becomes a hole, and the holes are squeezed out (in
 * order) once they are most of the array; the array goes with the last */
void span_drop(struct deps *d, struct buf *b, struct upd *u)
{
	uint32_t i, n = 0;

	if (u->span != UINT32_MAX)
		bd(b)->spans[u->span].u = NULL;
	if (bd(b)->nundo == 0) {
		grains_free(d, b);
		account_spans(d, -(long)(bd(b)->capspans * sizeof(*bd(b)->spans)));
		free(bd(b)->spans);
		bd(b)->spans = NULL;
		bd(b)->nspans = bd(b)->capspans = 0;
		return;
	}
	if (bd(b)->nspans < 32 || bd(b)->nundo > bd(b)->nspans / 4)
		return;
	for (i = 0; i < bd(b)->nspans; i++) {
		if (!bd(b)->spans[i].u)
			continue;
		bd(b)->spans[n] = bd(b)->spans[i];
		bd(b)->spans[n].u->span = n;
		n++;
	}
	bd(b)->nspans = n;
	if (bd(b)->gwords)
		grains_build(d, b); /* the indexes moved */
}
