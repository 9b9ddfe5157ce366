/*
 * writeback.c - the write-back policy of the three write modes: when the
 * engine writes what (deps.c, epoch.c say how).
 *
 *   softdep  lazily: an epoch when too much of the cache is dirty, too many
 *            updates are pending, or the oldest change is too old; and at
 *            sync, fsync and close;
 *   sync     each operation ends by writing every ordered update it made,
 *            with what it waits for (the classic FFS way);
 *   async    no updates are recorded: blocks go out as they stand when too
 *            much is dirty, one barrier at sync.
 *
 * The same code runs from the end of every operation (fs_op_end()), from
 * the cache when it is full of dirty buffers (cache_writeback(), the
 * cache's write_back hook), and from a timer (sufs_writeback_due()).
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Budget of pending updates before write-back is forced. */
#define PENDING_BUDGET 200000

/* One epoch of write-back; in async mode without its barrier. */
int cache_writeback(struct sufs_fs *fs)
{
	int n = deps_epoch(fs, NULL, NULL, fs->mode != SUFS_MODE_ASYNC);
	return n < 0 ? n : 0;
}

struct idlist {
	upd_id *ids;
	size_t n, cap;
};

static int collect_id(void *arg, struct buf *b, uint32_t off, uint32_t len, upd_id id)
{
	struct idlist *l = arg;

	(void)b; (void)off; (void)len;
	if (l->n == l->cap) {
		size_t cap = l->cap * 2 + 64;
		upd_id *p = realloc(l->ids, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->ids = p;
		l->cap = cap;
	}
	l->ids[l->n++] = id;
	return 0;
}

/* Every pending update but file data: what sync mode writes at once. */
static int want_ordered(struct sufs_fs *fs, upd_id **ids, size_t *n)
{
	struct idlist l = { NULL, 0, 0 };
	int err = deps_collect(fs, NULL, 0, 0, ~DEPS_KIND(UPD_DATA), collect_id, &l);

	if (err) {
		free(l.ids);
		l.ids = NULL;
		l.n = 0;
	}
	*ids = l.ids;
	*n = l.n;
	return err;
}

/* Debug builds check the engine's invariants after every operation. */
static void check_invariants(struct sufs_fs *fs)
{
#ifdef SUFS_DEBUG
	char why[256];

	if (deps_check(fs, why, sizeof(why))) {
		fprintf(stderr, "libsufs: the dependency engine broke an invariant: %s\n", why);
		abort();
	}
#else
	(void)fs;
#endif
}

/*
 * The end of every operation that changes something: the write-back
 * policy of the mode.
 */
int fs_op_end(struct sufs_fs *fs, int err)
{
	struct cache *c = &fs->cache;
	upd_id *ids;
	size_t n;
	int rc = 0;

	if (!(fs->flags & SUFS_OPEN_RDWR))
		return err;
	check_invariants(fs);
	switch (fs->mode) {
	case SUFS_MODE_SYNC:
		/* deferred frees make bitmap updates of their own: until none */
		do {
			rc = want_ordered(fs, &ids, &n);
			if (!rc && n)
				rc = deps_flush_set(fs, ids, n);
			else
				free(ids);
			if (!rc && !n && deps_deferred_work(fs)) {
				int e = deps_epoch(fs, NULL, NULL, 1);
				rc = e < 0 ? e : 0;
			}
		} while (!rc && (n || deps_deferred_work(fs)));
		break;
	case SUFS_MODE_SOFTDEP:
		if (c->dirty > c->dirty_limit || deps_pending_count(fs) > PENDING_BUDGET ||
		    (fs->max_age_ms && c->dirty &&
		     now_seconds_mono() - fs->last_epoch > fs->max_age_ms / 1000.0))
			rc = cache_writeback(fs);
		break;
	default:
		if (c->dirty > c->dirty_limit)
			rc = cache_writeback(fs);
		break;
	}
	return err ? err : rc;
}

void sufs_set_writeback(struct sufs_fs *fs, unsigned dirty_percent, unsigned max_age_ms)
{
	fs->dirty_percent = dirty_percent > 100 ? 100 : dirty_percent;
	fs->max_age_ms = max_age_ms;
	fs->cache.dirty_limit = fs->cache.limit * fs->dirty_percent / 100;
}

int sufs_writeback_due(struct sufs_fs *fs)
{
	return fs_op_end(fs, 0);
}
