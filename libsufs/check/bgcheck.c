/*
 * bgcheck.c - the background check (fsck.sufs -b): find the leaks of a
 * file system on a snapshot of it, and free them on the live one while it
 * goes on being used.
 *
 * Under soft updates a crash leaves only leaks: blocks and inodes marked in
 * use that nothing uses, link counts too high, summaries off.  None of
 * them is in anybody's way, and what nothing uses nobody will start using:
 * so they can be found at leisure on a frozen view (a snapshot) and then
 * given back on the live file system, each only if it is still as the
 * view found it:
 *
 *   a leaked block or inode      freed if still marked in use (a freed
 *                                block goes through free_block(), so a
 *                                snapshot that needs it takes it);
 *   an inode no name reaches     released, with what it holds;
 *   a link count too high        lowered by the excess found (the live
 *                                count has moved with the operations since);
 *   a wrong block count          counted again;
 *   blocks past the end          freed (past the size the file has now);
 *   a stale name of a directory  removed if it still names that directory;
 *   a snapshot file no slot      removed with its name, if it still is such
 *     names                      a file named so;
 *   a directory nothing names    released when empty, else given a name
 *                                in /lost+found (as the leak-only check);
 *   summaries                    recounted from the live bitmaps;
 *   snapshot files               (empty in the view) their block counts
 *                                recounted.
 *
 * Anything worse than a leak is not the background's business: it is
 * reported, the superblock flags the file system as needing a full check,
 * and nothing else changes.
 *
 * The view is checked by the ordinary checker (check_dev()), leak-only:
 * fix_problem() decides for each problem, as in any check, and hands each
 * fix it decides to this file (defer_fix()) rather than making it.  The
 * snapshot files' block maps, which the view shows empty, are looked at on
 * the live file system first, and what is wrong with them goes through
 * fix_problem() too (scan_snapshot_maps()).
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static const char bg_name[] = "fsck-background";

/* A fix the check decided: its problem, as reported. */
struct finding {
	unsigned code;
	uint32_t ino, ino2, dir;
	uint64_t blk, blk2, num, num2;
	char *name;
};

struct bg {
	struct sufs_check_opts vo; /* the checker's options (bg_checker()) */
	struct finding *f;      /* the fixes the check decided */
	size_t n, cap;
	int nomem;
	uint32_t *reco;         /* directories reconnected to /lost+found */
	size_t nreco, capreco;
};

/* Each fix the checker decides (fix_problem()): kept, to be made on the
 * live file system once the check is done. */
static void defer_fix(void *arg, const struct sufs_problem *p)
{
	struct bg *bg = arg;
	struct finding *f;

	if (bg->n == bg->cap) {
		size_t cap = bg->cap ? 2 * bg->cap : 64;
		struct finding *q = realloc(bg->f, cap * sizeof(*q));
		if (!q) {
			bg->nomem = 1;
			return;
		}
		bg->f = q;
		bg->cap = cap;
	}
	f = &bg->f[bg->n];
	f->code = p->def->code;
	f->ino = p->ino;
	f->ino2 = p->ino2;
	f->dir = p->dir;
	f->blk = p->blk;
	f->blk2 = p->blk2;
	f->num = p->num;
	f->num2 = p->num2;
	f->name = strdup(p->name);
	if (!f->name)
		bg->nomem = 1;
	else
		bg->n++;
}

/* The checker as the background runs it: with the caller's options and
 * callbacks, leak-only (an unnamed inode is cleared, not reconnected),
 * forced, on the one superblock; every fix it decides deferred to bg. */
static void bg_checker(struct chk *c, struct bg *bg, struct sufs_check_result *r)
{
	chk_init(c, &bg->vo, r);
	c->defer = defer_fix;
	c->defer_arg = bg;
}

/* ---- the fixes, on the live file system (under the lock) ---------------------- */

static int load_in_use(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in)
{
	int err;

	if (!inode_valid_ino(fs, ino))
		return -ENOENT;
	err = inode_load(fs, ino, in);
	if (err)
		return err;
	return in->mode ? 0 : -ENOENT;
}

/* Lower a link count by the excess the view found. */
static int lower(struct sufs_fs *fs, uint32_t ino, uint64_t had, uint64_t should)
{
	struct sufs_inode in;
	uint64_t excess = had > should ? had - should : 0;
	int err = load_in_use(fs, ino, &in);

	if (err)
		return err == -ENOENT ? 0 : err; /* gone since: nothing to lower */
	/* the excess stays as names come and go: at the excess, no name is
	 * left (the last went since the snapshot), and the inode goes (its
	 * zeroing waits for that removal, which overlaps it) */
	if (in.links <= excess)
		return S_ISDIR(in.mode) || snap_is_file(fs, ino) ? 0 : ops_release_inode(fs, ino);
	in.links -= (uint32_t)excess;
	return inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL);
}

/* An inode nothing names: released if it is still in use and unnamed (a
 * leak has no name to be given a second one through). */
static int release(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	int err = load_in_use(fs, ino, &in);

	if (err)
		return err == -ENOENT ? 0 : err;
	if (snap_is_file(fs, ino))
		return 0;
	return ops_release_inode(fs, ino);
}

/*
 * A directory nothing names (its name never reached the disk, though names
 * in it did): given a name in /lost+found, as the leak-only check does, so
 * that no name made durable in it is lost.  Rule 1 in order: lost+found's
 * link count, then the directory's "..", then the new name.
 */
static int reconnect_dir(struct sufs_fs *fs, uint32_t ino)
{
	static const char lf_name[] = "lost+found";
	struct sufs_cred root = { 0, 0 };
	struct sufs_inode lfin, in;
	struct waits w = { 0 }, iw = { 0 };
	uint32_t lf, old;
	upd_id raised, dotdot, id;
	char name[32];
	int err, n;

	err = sufs_lookup(fs, SUFS_ROOT_INO, lf_name, sizeof(lf_name) - 1, &lf);
	if (err == -ENOENT)
		err = sufs_mkdir(fs, SUFS_ROOT_INO, lf_name, sizeof(lf_name) - 1, 0700, &root, &lf);
	if (!err)
		err = load_in_use(fs, lf, &lfin);
	if (!err)
		err = load_in_use(fs, ino, &in);
	if (err)
		return err;
	if (!S_ISDIR(lfin.mode))
		return -EAGAIN; /* not a directory: a full check will see to it */
	lfin.links++;
	err = inode_store(fs, lf, &lfin, UPD_INODEDEP, NULL, &raised);
	waits_add(&w, raised);
	if (!err)
		err = dir_set(fs, ino, &in, "..", 2, lf, SUFS_FT_DIR, UPD_DIRADD, &w, &old, &dotdot);
	for (n = 0; !err; n++) {
		snprintf(name, sizeof(name), n ? "#%u.%d" : "#%u", ino, n);
		err = dir_add(fs, lf, &lfin, name, strlen(name), ino, SUFS_FT_DIR, NULL, &iw, &id);
		if (err != -EEXIST)
			break;
		err = 0;
	}
	if (!err)
		err = inode_store(fs, lf, &lfin, UPD_INODEDEP, &iw, NULL);
	return err;
}

/* A directory's name left by a rename: removed if it still names it. */
static int stale_name(struct sufs_fs *fs, const struct finding *f)
{
	struct sufs_inode din;
	uint32_t ino, old;
	upd_id id;
	size_t len = strlen(f->name);
	int err = load_in_use(fs, f->dir, &din);

	if (err)
		return err == -ENOENT ? 0 : err;
	if (!S_ISDIR(din.mode) || dir_lookup(fs, f->dir, &din, f->name, len, &ino) || ino != f->ino)
		return 0;
	return dir_set(fs, f->dir, &din, f->name, len, 0, 0, UPD_DIRREM, NULL, &old, &id);
}

/* Summaries from the live bitmaps (and inodes, for the directories). */
static int recount(struct sufs_fs *fs)
{
	struct sufs_group_layout l;
	uint64_t blk, total_b = 0, total_i = 0;
	struct sufs_inode in;
	uint32_t g, ino, fb, fi, dirs;
	int set, err;

	for (g = 0; g < fs->sb.groups_count; g++) {
		sufs_group_layout(&fs->sb, g, &l);
		fb = fi = dirs = 0;
		for (blk = l.first_data; blk < l.end; blk++) {
			if ((err = bitmap_test(fs, SUFS_BITMAP_BLOCK, blk, &set)) != 0)
				return err;
			fb += !set;
		}
		for (ino = g * fs->sb.inodes_per_group + 1;
		     ino <= (g + 1) * fs->sb.inodes_per_group; ino++) {
			if ((err = bitmap_test(fs, SUFS_BITMAP_INODE, ino, &set)) != 0)
				return err;
			fi += !set && ino >= SUFS_ROOT_INO;
			if (set && ino >= SUFS_ROOT_INO && inode_load(fs, ino, &in) == 0 &&
			    S_ISDIR(in.mode))
				dirs++;
		}
		if (fs->groups[g].free_blocks != fb || fs->groups[g].free_inodes != fi ||
		    fs->groups[g].used_dirs != dirs) {
			fs->groups[g].free_blocks = fb;
			fs->groups[g].free_inodes = fi;
			fs->groups[g].used_dirs = dirs;
			fs->gdt_dirty[(uint64_t)g * SUFS_GROUP_DESC_SIZE / fs->bsize] = 1;
		}
		total_b += fb;
		total_i += fi;
	}
	fs->sb.free_blocks = total_b;
	fs->sb.free_inodes = (uint32_t)total_i;
	fs->sb_dirty = 1;
	return 0;
}

static int count_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		    int level, int bad, void *arg)
{
	(void)fs; (void)ino; (void)lblk; (void)pblk; (void)level;
	*(uint64_t *)arg += !bad;
	return 0;
}

/* An inode's block count (a summary) from the blocks it maps now. */
static int recount_blocks(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	uint64_t n = 0;
	int err = load_in_use(fs, ino, &in);

	if (err)
		return err == -ENOENT ? 0 : err;
	err = inode_walk(fs, ino, &in, count_fn, &n);
	if (err || n == in.blocks)
		return err;
	in.blocks = n;
	return inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL);
}

/* Snapshot files read as empty in the view: their block counts (the one
 * thing a crash can leave wrong in them) are counted here. */
static int recount_snapshots(struct sufs_fs *fs)
{
	unsigned k;
	int err = 0;

	for (k = 0; k < SUFS_SNAP_SLOTS && !err; k++)
		if (fs->sb.snap[k].ino)
			err = recount_blocks(fs, fs->sb.snap[k].ino);
	return err;
}

/* Snapshot files read as empty in the view, so its check never sees their
 * block maps: a pointer out of range in one is looked for here, on the
 * live file system, and reported as the check reports what it finds.
 * (Taken with it, the snapshot would leave out only the blocks the
 * damaged map still reaches: the others would look leaked, and be freed
 * from under the snapshot.) */
static int snap_map_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		       int level, int bad, void *arg)
{
	struct pctx x = { .ino = ino, .num = lblk, .blk = pblk };

	(void)fs; (void)level;
	if (bad)
		fix_problem(arg, SUFS_PR_BAD_BLOCK, &x);
	return 0;
}

static int scan_snapshot_maps(struct sufs_fs *fs, struct chk *c)
{
	struct sufs_inode in;
	struct pctx x;
	unsigned k;
	int err = 0;

	for (k = 0; k < SUFS_SNAP_SLOTS && !err; k++) {
		uint32_t ino = fs->sb.snap[k].ino;
		const char *why = NULL;

		if (!ino)
			continue;
		if (!inode_valid_ino(fs, ino)) {
			why = "no such inode";
		} else if ((err = inode_load(fs, ino, &in)) == -SUFS_ECHECKSUM) {
			x = (struct pctx){ .ino = ino };
			fix_problem(c, SUFS_PR_INODE_CSUM, &x);
		} else if (err == -SUFS_ECORRUPT || (!err && !S_ISREG(in.mode))) {
			why = err ? "its inode cannot be read" : "not a regular file";
		} else if (!err) {
			err = inode_walk(fs, ino, &in, snap_map_fn, c);
		}
		if (why) {
			x = (struct pctx){ .ino = ino, .num = k, .str = why };
			fix_problem(c, SUFS_PR_SNAP_SLOT_BAD, &x);
		}
		if (err == -SUFS_ECHECKSUM || err == -SUFS_ECORRUPT)
			err = 0;
	}
	return err;
}

static int remember(struct bg *bg, uint32_t ino)
{
	if (bg->nreco == bg->capreco) {
		size_t cap = bg->capreco ? 2 * bg->capreco : 16;
		uint32_t *p = realloc(bg->reco, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		bg->reco = p;
		bg->capreco = cap;
	}
	bg->reco[bg->nreco++] = ino;
	return 0;
}

static unsigned reconnected(const struct bg *bg, uint32_t ino)
{
	size_t i;

	for (i = 0; i < bg->nreco; i++)
		if (bg->reco[i] == ino)
			return 1;
	return 0;
}

static int apply(struct sufs_fs *fs, struct bg *bg, const struct finding *f, int *summaries)
{
	struct sufs_inode in;
	uint64_t n;
	uint32_t i;
	int set, err = 0;

	switch (f->code) {
	case SUFS_PR_BLOCKS_LEAKED:
		/* (one freed by another fix since may be a snapshot's now) */
		for (n = f->blk; n <= f->blk2 && !err; n++)
			if (!(err = bitmap_test(fs, SUFS_BITMAP_BLOCK, n, &set)) && set &&
			    !snap_claimed(fs, n))
				err = free_block(fs, n);
		*summaries = 1;
		return err;
	case SUFS_PR_INODES_LEAKED:
		for (i = f->ino; i <= f->ino2 && !err; i++) {
			if ((err = bitmap_test(fs, SUFS_BITMAP_INODE, i, &set)) != 0 || !set)
				continue;
			if (inode_load(fs, i, &in) == 0 && in.mode)
				continue; /* in use again */
			err = free_inode(fs, i, 0);
		}
		*summaries = 1;
		return err;
	case SUFS_PR_UNATTACHED_EMPTY:
	case SUFS_PR_UNATTACHED_CLEAR:
		return release(fs, f->ino);
	case SUFS_PR_DIR_UNREF_EMPTY:
		/* (its '..' is not counted in its parent's links: the parent's
		 * count is a finding of its own) */
		return release(fs, f->ino);
	case SUFS_PR_DIR_UNREF:
		err = load_in_use(fs, f->ino, &in);
		if (err)
			return err == -ENOENT ? 0 : err;
		if (!S_ISDIR(in.mode))
			return 0;
		err = reconnect_dir(fs, f->ino);
		if (!err)
			err = remember(bg, f->ino);
		return err;
	case SUFS_PR_LINKS_HIGH:
		/* a directory reconnected above has one name more than the view
		 * counted */
		return lower(fs, f->ino, f->num, f->num2 + reconnected(bg, f->ino));
	case SUFS_PR_BLOCKS_COUNT:
		return recount_blocks(fs, f->ino);
	case SUFS_PR_BLOCK_PAST_SIZE:
		err = load_in_use(fs, f->ino, &in);
		if (err)
			return err == -ENOENT ? 0 : err;
		if (snap_is_file(fs, f->ino))
			return 0;
		err = ops_trim_inode(fs, f->ino);
		return err ? err : recount_blocks(fs, f->ino);
	case SUFS_PR_DIR_STALE_NAME:
		return stale_name(fs, f);
	case SUFS_PR_SNAP_ORPHAN:
		return snap_remove_orphan(fs, f->ino, f->dir, f->name);
	case SUFS_PR_GROUP_COUNTS:
	case SUFS_PR_SB_COUNTS:
		*summaries = 1;
		return 0;
	default:
		return -EAGAIN; /* a leak the background does not mend: a full check will */
	}
}

static int is_bitmap_leak(unsigned code)
{
	return code == SUFS_PR_BLOCKS_LEAKED || code == SUFS_PR_INODES_LEAKED;
}

/* ---- the whole of it ----------------------------------------------------------- */

static void record(struct sufs_fs *fs, int status)
{
	fs_now(fs, &fs->sb.check_time, &(uint32_t){ 0 });
	fs->sb.check_result = (uint32_t)status;
	if (status & SUFS_EXIT_UNCORRECTED)
		fs->sb.flags |= SUFS_FLAG_NEEDS_FSCK;
	else
		fs->was_clean = 1; /* no leak left: it closes clean */
	if (fs_write_super(fs, 0) == 0)
		sufs_dev_barrier(fs->dev);
}

/*
 * Under the lock, before the check: the look at the snapshot files' maps
 * on the live file system, then the snapshot to check, and its view.
 * Returns 0 with *view, 1 when the look found damage (reported and
 * recorded: the view is not checked), or an error.
 */
static int take_view(struct sufs_fs *fs, struct chk *c, struct sufs_dev **view)
{
	struct sufs_check_result *r = c->r;
	struct sufs_snap_info info;
	int err = scan_snapshot_maps(fs, c);

	if (err) {
		r->status = 0; /* the error is the outcome, not what was told before it */
		return err;
	}
	if (r->nonleaks) {
		r->status = SUFS_EXIT_UNCORRECTED;
		r->halted = 1;
		if (!(c->flags & SUFS_CHECK_NO))
			record(fs, r->status);
		return 1;
	}
	/* one left by an interrupted run goes first */
	err = sufs_snap_delete(fs, bg_name);
	if (err == -SUFS_ENOTSNAP)
		err = 0;
	if (!err) {
		err = sufs_snap_create(fs, bg_name, &info);
		if (err)
			r->error_where = "taking the snapshot to check";
	}
	if (!err)
		err = sufs_snap_open_dev(fs, bg_name, view);
	return err;
}

/*
 * Under the lock, after the check of the view: the fixes it decided, made
 * on the live file system (the leaked blocks and inodes last, after what
 * the other fixes free has gone back, deferred: a block past the end of a
 * file is a leaked block in the view too), then the summaries.
 */
static int fix_live(struct sufs_fs *fs, struct bg *bg, struct sufs_check_result *r)
{
	size_t i;
	int err = 0, rc, phase, summaries = 0;

	for (phase = 0; phase < 2 && !err; phase++) {
		for (i = 0; i < bg->n && !err; i++) {
			if (is_bitmap_leak(bg->f[i].code) != phase)
				continue;
			rc = apply(fs, bg, &bg->f[i], &summaries);
			if (rc == -EAGAIN)
				r->status |= SUFS_EXIT_UNCORRECTED;
			else if (rc)
				err = rc;
			else
				r->fixed++;
		}
		/* and a directory removed but not yet freed would count
		 * twice in the summaries */
		if (!err)
			err = sufs_sync(fs);
	}
	if (!err && summaries)
		err = recount(fs);
	if (!err)
		err = recount_snapshots(fs);
	if (!err && r->fixed)
		r->status |= SUFS_EXIT_CORRECTED;
	r->modified = r->fixed != 0;
	return err;
}

/*
 * Under the lock, after the check of the view (err: how it ended): the
 * outcome.  Nothing is fixed when it found worse than a leak, nor with
 * -n, which writes nothing; an interrupted check decides nothing and
 * records nothing.  The snapshot goes in any case.
 */
static int conclude(struct sufs_fs *fs, struct chk *c, struct bg *bg, int err)
{
	struct sufs_check_result *r = c->r;
	int rc;

	if (!err && !(r->status & SUFS_EXIT_CANCELLED)) {
		r->status = 0;
		r->fixed = 0;
		if (r->nonleaks) {
			r->status = SUFS_EXIT_UNCORRECTED;
			r->halted = 1;
		} else {
			if (!(c->flags & SUFS_CHECK_NO))
				err = fix_live(fs, bg, r);
			if (r->problems > bg->n) /* answered no (-n) */
				r->status |= SUFS_EXIT_UNCORRECTED;
		}
		if (!err)
			err = fs_op_end(fs, 0);
	}
	rc = sufs_snap_delete(fs, bg_name);
	if (!err && rc)
		err = rc;
	if (!err && !(c->flags & SUFS_CHECK_NO) && !(r->status & SUFS_EXIT_CANCELLED))
		record(fs, r->status);
	return err;
}

int sufs_check_background(struct sufs_fs *fs, const struct sufs_check_opts *given,
			  struct sufs_check_result *r)
{
	struct sufs_check_opts opts, *o = &opts;
	struct bg bg = { 0 };
	struct sufs_dev *view = NULL;
	struct chk c;
	size_t i;
	int err;

	err = check_opts(given, o);
	if (err) {
		memset(r, 0, sizeof(*r));
		r->error = err;
		r->status = SUFS_EXIT_USAGE;
		return err;
	}
	bg.vo = *o;
	bg.vo.flags |= SUFS_CHECK_LEAKS_ONLY | SUFS_CHECK_FORCE;
	bg.vo.sb_offset = 0;
	bg.vo.ask = NULL;
	bg_checker(&c, &bg, r);
	if (!(fs->flags & SUFS_OPEN_RDWR))
		return -EROFS;
	sufs_lock(fs);
	if (fs->sb.write_mode != SUFS_MODE_SOFTDEP || fs->mode != SUFS_MODE_SOFTDEP ||
	    (fs->sb.flags & SUFS_FLAG_NEEDS_FSCK)) {
		sufs_unlock(fs);
		return -SUFS_EBGREFUSED;
	}
	err = take_view(fs, &c, &view);
	sufs_unlock(fs);
	if (!err) {
		if (o->throttle_kib)
			snap_view_throttle(view, o->throttle_kib, o->cancelled, o->arg);
		/* the check of the frozen view: reads only, the lock taken
		 * per read */
		bg_checker(&c, &bg, r);
		err = check_dev(&c, view);
		sufs_dev_close(view);
		if (!err && bg.nomem)
			err = -ENOMEM;
		sufs_lock(fs);
		err = conclude(fs, &c, &bg, err);
		sufs_unlock(fs);
	}
	if (err == 1)
		err = 0; /* damage found before the view was taken */
	for (i = 0; i < bg.n; i++)
		free(bg.f[i].name);
	free(bg.f);
	free(bg.reco);
	if (err) {
		r->error = err;
		r->status |= err == -ENOMEM ? SUFS_EXIT_LIBERROR : SUFS_EXIT_OPERROR;
	}
	return err;
}
