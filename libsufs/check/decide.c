/*
 * decide.c - fix_problem(), the one place that decides whether a problem
 * found is fixed: by the problem's row in the table (problems.c) and the
 * run's mode (-n, -y, -p, leak-only, a trial run, the background check);
 * and what goes with deciding: what a trial run holds back, the first
 * repair marking the image unclean, polling for an interrupt, progress.
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdlib.h>

/* Hold back what a trial run reports: a problem, or a pass beginning
 * (p NULL). */
static void hold(struct chk *c, unsigned pass, const char *name, const struct sufs_problem *p)
{
	struct held *h;

	if (c->nheld == c->capheld) {
		size_t cap = c->capheld ? 2 * c->capheld : 64;
		h = realloc(c->held, cap * sizeof(*h));
		if (!h)
			return; /* a report lost: the repair does not depend on it */
		c->held = h;
		c->capheld = cap;
	}
	h = &c->held[c->nheld++];
	h->pass = pass;
	h->pass_name = name;
	if (p)
		h->problem = *p;
	else
		h->problem.def = NULL;
}

/* Tell what a trial run held back. */
void tell_held(struct chk *c)
{
	size_t i;

	for (i = 0; i < c->nheld; i++) {
		struct held *h = &c->held[i];
		if (!h->problem.def && c->o->pass)
			c->o->pass(c->o->arg, h->pass, h->pass_name);
		else if (h->problem.def && c->o->report)
			c->o->report(c->o->arg, &h->problem, 0);
	}
}

/* Mark the image as being repaired before the first repair reaches it. */
static int touch(struct chk *c)
{
	int err;

	if (c->touched)
		return 0;
	c->touched = 1;
	c->r->modified = 1;
	c->fs->sb.state &= ~SUFS_STATE_CLEAN;
	err = fs_write_super(c->fs, 0);
	if (!err)
		err = sufs_dev_barrier(c->fs->dev);
	return err;
}

/*
 * The answer to a problem, by the run's mode: -n, and a leak-only trial
 * run, answer no; leak-only (-L, and the background check) no to
 * whatever is not a leak; the background check yes to every leak, to be
 * fixed on the live file system once its check is done; nothing is fixed
 * on a file system not open for writing; preen (-p) fixes PREEN_OK
 * problems; -y says yes; otherwise the caller is asked.
 */
static int decide(struct chk *c, const struct sufs_problem *p)
{
	unsigned rf = p->def->flags;

	if (c->dry || (c->flags & SUFS_CHECK_NO))
		return 0;
	if ((c->flags & SUFS_CHECK_LEAKS_ONLY) && !(rf & SUFS_PR_LEAK))
		return 0;
	if (c->defer)
		return 1;
	if (!c->writable)
		return 0;
	if (c->flags & SUFS_CHECK_PREEN)
		return (rf & SUFS_PR_PREEN_OK) != 0;
	if (c->flags & SUFS_CHECK_YES)
		return 1;
	return c->o->ask ? c->o->ask(c->o->arg, p) != 0 : 0;
}

/*
 * The one place that decides whether a problem is fixed: every problem
 * found, in a pass or in the background check's look at the live file
 * system, is made here from its row, counted, answered (decide()) and
 * reported.  Returns 1 when the caller is to fix it, 0 when not.  A fix
 * the background check defers goes to c->defer, and is a 0 here: what it
 * checks is not written.  Preen halts at the first problem it may not fix.
 */
int fix_problem(struct chk *c, unsigned code, const struct pctx *x)
{
	const struct sufs_problem_def *d = sufs_problem_def(code);
	struct sufs_check_result *r = c->r;
	struct sufs_problem p;
	int fix;

	if (!d || c->stop != GOING)
		return 0;
	problem_make(&p, d, x);
	r->problems++;
	if (d->flags & SUFS_PR_LEAK)
		r->leaks++;
	else
		r->nonleaks++;
	fix = decide(c, &p);
	if (fix && c->defer) {
		c->defer(c->defer_arg, &p);
		fix = 0;
	}
	if (fix && touch(c))
		fix = 0;
	if (fix)
		r->fixed++;
	else
		r->status |= SUFS_EXIT_UNCORRECTED;
	if (c->dry)
		hold(c, 0, NULL, &p);
	else if (c->o->report)
		c->o->report(c->o->arg, &p, fix);
	if (!fix && (c->flags & SUFS_CHECK_PREEN) && !c->dry && c->writable) {
		r->halted = 1;
		c->stop = HALTED;
	}
	return fix;
}

/* Whether the run fixes leaks only, whatever else it meets (-p, -L, and
 * the background check): an unattached inode is then a removal whose
 * freeing did not finish, cleared rather than connected to /lost+found,
 * as fsck_ffs -p clears it (pass 4). */
int fixes_leaks_only(const struct chk *c)
{
	return (c->flags & (SUFS_CHECK_LEAKS_ONLY | SUFS_CHECK_PREEN)) != 0;
}

/* A repair said yes to could not be made: count it as not fixed. */
void fix_failed(struct chk *c)
{
	if (c->r->fixed)
		c->r->fixed--;
	c->r->status |= SUFS_EXIT_UNCORRECTED;
}

/* Whether the run stops (preen halted, or the caller cancelled it, asked
 * every 64th time): the passes poll it as they go. */
int poll_stop(struct chk *c)
{
	if (c->stop == GOING && c->o->cancelled && (++c->polls & 63) == 0 &&
	    c->o->cancelled(c->o->arg))
		c->stop = CANCELLED;
	return c->stop != GOING;
}

/* How far a pass is, told to the caller every 256th step and at the end. */
void pass_progress(struct chk *c, unsigned pass, uint64_t done, uint64_t total)
{
	if (c->o->progress && ((done & 255) == 0 || done == total))
		c->o->progress(c->o->arg, pass, done, total);
}

/* A pass begins: said now, or held back by a trial run. */
void begin_pass(struct chk *c, unsigned pass, const char *name)
{
	if (c->stop != GOING)
		return;
	if (c->dry)
		hold(c, pass, name, NULL);
	else if (c->o->pass)
		c->o->pass(c->o->arg, pass, name);
}

