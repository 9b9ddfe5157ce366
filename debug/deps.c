/*
 * deps.c - sufs-debug's views of the dependency engine: what no other tool
 * shows.  With the image open for writing, the changes of the modifying
 * commands stay in memory as pending updates until they are flushed, and
 * these commands look at them:
 *
 *   deps     the pending updates (all, one block's, or one file's) as a
 *            table, as chains of what waits for what, or as a Graphviz graph
 *   why      what keeps one block from going out as it stands in memory
 *   flush    write epochs one at a time, showing per block written which
 *            updates went out and which were undone in its write image
 *   crash    drop everything in memory and reopen the image as the disk
 *            holds it
 *   stats    the engine's counters
 *
 * The library hands out the updates per block (sufs_deps_walk); here they
 * become a graph: nodes in id order, each with the ids it waits for.  Ids
 * grow and an update waits only for older ones, so id order is a
 * topological order, and one pass in it computes the epoch in which each
 * update reaches the disk when everything is flushed: an update goes out
 * with the first write of its block after everything it waits for on
 * other blocks is on disk (one epoch later), and with what it waits for on
 * its own block (the same write).
 */
#include "config.h"

#include "commands.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* The graph of pending updates                                              */
/* ------------------------------------------------------------------------ */

struct node {
	uint64_t id, blk;
	const char *kind, *type;   /* the library's static strings */
	uint32_t off, len;
	unsigned state;            /* enum sufs_dep_state */
	unsigned nwaits;
	size_t *waits;             /* indexes of what it waits for (in the graph) */
	unsigned nafters;          /* how many wait for it */
	unsigned epoch;            /* when a full flush puts it on disk (1, 2, ...) */
	int selected;              /* shown (the filter) */
	int printed;               /* scratch for the chains */
};

struct graph {
	struct node *v;            /* in walk order: by block, oldest first */
	size_t n, cap;
	size_t *by_id;             /* indexes in id order */
	uint64_t **raw_waits;      /* the ids as walked, until resolved */
	size_t nblocks;            /* with pending updates */
	size_t nplain;             /* dirty without any */
	unsigned epochs;           /* of a full flush */
};

static int collect(void *arg, const struct sufs_dep_block *b)
{
	struct graph *g = arg;
	size_t i;

	if (b->ndeps)
		g->nblocks++;
	else
		g->nplain++;  /* dirty with times and counts only */
	if (g->n + b->ndeps > g->cap) {
		size_t cap = (g->n + b->ndeps) * 2 + 16;
		struct node *v = realloc(g->v, cap * sizeof(*v));
		uint64_t **w = realloc(g->raw_waits, cap * sizeof(*w));
		if (v)
			g->v = v;
		if (w)
			g->raw_waits = w;
		if (!v || !w)
			return -ENOMEM;
		g->cap = cap;
	}
	for (i = 0; i < b->ndeps; i++) {
		const struct sufs_dep *d = &b->deps[i];
		struct node *x = &g->v[g->n];
		uint64_t *w = malloc((d->nwaits + 1) * sizeof(*w));
		if (!w)
			return -ENOMEM;
		memcpy(w, d->waits, d->nwaits * sizeof(*w));
		*x = (struct node){ .id = d->id, .blk = b->blk, .kind = d->kind, .type = b->type,
				    .off = d->off, .len = d->len, .state = d->state,
				    .nwaits = d->nwaits };
		g->raw_waits[g->n++] = w;
	}
	return 0;
}

/* The graph qsort() compares in (it passes no argument to the comparison). */
static const struct graph *sort_graph;

static int cmp_by_id(const void *a, const void *b)
{
	uint64_t x = sort_graph->v[*(const size_t *)a].id, y = sort_graph->v[*(const size_t *)b].id;
	return x < y ? -1 : x > y;
}

/* The node with this id, or NULL. */
static struct node *find_id(const struct graph *g, uint64_t id)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint64_t m = g->v[g->by_id[mid]].id;
		if (m == id)
			return &g->v[g->by_id[mid]];
		if (m < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void graph_free(struct graph *g)
{
	size_t i;

	for (i = 0; i < g->n; i++) {
		free(g->v[i].waits);
		if (g->raw_waits)
			free(g->raw_waits[i]);
	}
	free(g->v);
	free(g->raw_waits);
	free(g->by_id);
	memset(g, 0, sizeof(*g));
}

/* Walk the pending updates into g; link them; compute their epochs. */
static int graph_load(struct session *s, struct graph *g)
{
	size_t i, k;
	int rc;

	memset(g, 0, sizeof(*g));
	rc = sufs_deps_walk(s->fs, SUFS_DEPS_ALL, collect, g);
	if (rc == 0 && !(g->by_id = malloc((g->n + 1) * sizeof(*g->by_id))))
		rc = -ENOMEM;
	if (rc)
		goto bad;
	for (i = 0; i < g->n; i++)
		g->by_id[i] = i;
	sort_graph = g;
	qsort(g->by_id, g->n, sizeof(*g->by_id), cmp_by_id);
	for (i = 0; i < g->n; i++) {
		struct node *x = &g->v[i];
		unsigned m = 0;
		if (!(x->waits = malloc((x->nwaits + 1) * sizeof(*x->waits)))) {
			rc = -ENOMEM;
			goto bad;
		}
		for (k = 0; k < x->nwaits; k++) {
			struct node *w = find_id(g, g->raw_waits[i][k]);
			if (w) {  /* always: what is waited for is pending */
				x->waits[m++] = (size_t)(w - g->v);
				w->nafters++;
			}
		}
		x->nwaits = m;
		free(g->raw_waits[i]);
		g->raw_waits[i] = NULL;
	}
	free(g->raw_waits);
	g->raw_waits = NULL;
	/* epochs, in id order: what an update waits for comes first */
	for (i = 0; i < g->n; i++) {
		struct node *x = &g->v[g->by_id[i]];
		x->epoch = 1;
		for (k = 0; k < x->nwaits; k++) {
			const struct node *w = &g->v[x->waits[k]];
			unsigned e = w->epoch + (w->blk != x->blk);
			if (e > x->epoch)
				x->epoch = e;
		}
		if (x->epoch > g->epochs)
			g->epochs = x->epoch;
	}
	return 0;
bad:
	graph_free(g);
	return rc;
}

/* Select a node and, transitively, everything it waits for. */
static void select_closure(struct graph *g, struct node *x)
{
	unsigned k;

	if (x->selected)
		return;
	x->selected = 1;
	for (k = 0; k < x->nwaits; k++)
		select_closure(g, &g->v[x->waits[k]]);
}

/* one or the other, as n is 1 or not */
static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static const char *state_name(unsigned state)
{
	switch (state) {
	case SUFS_DEP_READY:   return "ready";
	case SUFS_DEP_BLOCKED: return "blocked";
	case SUFS_DEP_WRITTEN: return "written";
	case SUFS_DEP_UNDONE:  return "undone";
	}
	return "?";
}

/* ------------------------------------------------------------------------ */
/* What a filter names: a block, or an inode (its slot and its blocks)       */
/* ------------------------------------------------------------------------ */

struct target {
	int is_block;
	uint64_t blk;              /* is_block */
	uint32_t ino;              /* else */
	uint64_t slot_blk;         /* the inode's bytes in the inode table */
	uint32_t slot_off;
	uint64_t *blocks;          /* the blocks it maps, indirect ones too */
	size_t nblocks, cap;
};

static int add_mapped(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
		      int bad, void *arg)
{
	struct target *t = arg;

	(void)fs, (void)ino, (void)lblk, (void)level;
	if (bad)
		return 0;
	if (t->nblocks == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		uint64_t *v = realloc(t->blocks, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->blocks = v;
		t->cap = cap;
	}
	t->blocks[t->nblocks++] = pblk;
	return 0;
}

/* A number is a block; anything else a path (<INO> an inode).  Returns 0 or
 * 1 after a message. */
static int parse_target(struct session *s, const char *cmd, const char *arg, struct target *t)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	struct sufs_group_layout l;
	uint32_t index, ipb;
	int rc;

	memset(t, 0, sizeof(*t));
	if (arg[0] >= '0' && arg[0] <= '9') {
		if (parse_u64(arg, &t->blk) || t->blk >= sb->blocks_count)
			return fail(cmd, arg, "not a block number (the image has 0 to %llu)",
				    (unsigned long long)sb->blocks_count - 1);
		t->is_block = 1;
		return 0;
	}
	if (resolve(s, cmd, arg, 0, &t->ino))
		return 1;
	index = (t->ino - 1) % sb->inodes_per_group;
	ipb = sb->block_size / SUFS_INODE_SIZE;
	sufs_group_layout(sb, (t->ino - 1) / sb->inodes_per_group, &l);
	t->slot_blk = l.inode_table + index / ipb;
	t->slot_off = index % ipb * SUFS_INODE_SIZE;
	rc = sufs_block_iterate(s->fs, t->ino, add_mapped, t);
	if (rc < 0 && rc != -SUFS_ECHECKSUM) {
		free(t->blocks);
		return fail(cmd, arg, "%s", sufs_strerror(rc));
	}
	return 0;
}

static int on_target(const struct target *t, const struct node *x)
{
	size_t i;

	if (t->is_block)
		return x->blk == t->blk;
	if (x->blk == t->slot_blk)
		return x->off < t->slot_off + SUFS_INODE_SIZE && t->slot_off < x->off + x->len;
	for (i = 0; i < t->nblocks; i++)
		if (t->blocks[i] == x->blk)
			return 1;
	return 0;
}

/*
 * Select what the target shows: the updates on it, the updates that wait
 * for them directly (a new name waiting for a new inode), and everything
 * either waits for.  Returns how many updates are on the target itself.
 */
static size_t select_target(struct graph *g, const struct target *t)
{
	size_t i, n = 0;
	unsigned k;

	for (i = 0; i < g->n; i++) {
		struct node *x = &g->v[i];
		if (on_target(t, x)) {
			n++;
			select_closure(g, x);
			continue;
		}
		for (k = 0; k < x->nwaits; k++) {
			if (on_target(t, &g->v[x->waits[k]])) {
				select_closure(g, x);
				break;
			}
		}
	}
	return n;
}

/* ------------------------------------------------------------------------ */
/* Renderings: table, chains, Graphviz                                       */
/* ------------------------------------------------------------------------ */

static void print_waits(FILE *f, const struct graph *g, const struct node *x)
{
	unsigned k;

	if (!x->nwaits)
		fputs("-", f);
	for (k = 0; k < x->nwaits; k++)
		fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)g->v[x->waits[k]].id);
}

static void print_table(const struct graph *g)
{
	size_t i;

	printf("%7s  %-11s %9s  %-11s %6s %6s  %-7s %5s  %s\n", "ID", "KIND", "BLOCK", "TYPE",
	       "OFFSET", "LENGTH", "STATE", "EPOCH", "WAITS FOR");
	for (i = 0; i < g->n; i++) {
		const struct node *x = &g->v[i];
		if (!x->selected)
			continue;
		printf("%7llu  %-11s %9llu  %-11s %6u %6u  %-7s %5u  ", (unsigned long long)x->id,
		       x->kind, (unsigned long long)x->blk, x->type, x->off, x->len,
		       state_name(x->state), x->epoch);
		print_waits(stdout, g, x);
		putchar('\n');
	}
}

/* "#8 diradd, block 68 (directory) bytes 32+4: blocked, epoch 3" */
static void print_node(const struct node *x)
{
	printf("#%llu %s, block %llu (%s) bytes %u+%u: %s, epoch %u", (unsigned long long)x->id,
	       x->kind, (unsigned long long)x->blk, x->type, x->off, x->len, state_name(x->state),
	       x->epoch);
}

/*
 * x, then what it waits for below it, indented: the chain that decides
 * when x reaches the disk.  A node shown whole once is later only named.
 */
static void print_chain(struct graph *g, struct node *x, char *prefix, size_t plen, int last,
			int root)
{
	unsigned k;

	if (!root)
		printf("%.*s%s", (int)plen, prefix, last ? "`-- " : "|-- ");
	print_node(x);
	if (x->printed && x->nwaits) {
		puts(" (waits as shown above)");
		return;
	}
	putchar('\n');
	x->printed = 1;
	if (plen + 8 >= 4096)
		return;
	if (!root) {
		memcpy(prefix + plen, last ? "    " : "|   ", 4);
		plen += 4;
	}
	for (k = 0; k < x->nwaits; k++)
		print_chain(g, &g->v[x->waits[k]], prefix, plen, k + 1 == x->nwaits, 0);
}

/* Every selected update that no selected update waits for, with its chain. */
static void print_chains(struct graph *g)
{
	char prefix[4096];
	size_t i;
	unsigned k;

	for (i = 0; i < g->n; i++)
		g->v[i].nafters = 0;
	for (i = 0; i < g->n; i++)
		if (g->v[i].selected)
			for (k = 0; k < g->v[i].nwaits; k++)
				g->v[g->v[i].waits[k]].nafters++;
	for (i = 0; i < g->n; i++) {
		struct node *x = &g->v[g->by_id[g->n - 1 - i]];  /* newest first */
		if (x->selected && !x->nafters)
			print_chain(g, x, prefix, 0, 1, 1);
	}
}

static void write_dot(FILE *f, const struct graph *g, const char *image)
{
	size_t i, j;
	unsigned k;
	const char *p;

	fputs("digraph sufs_deps {\n", f);
	fputs("\tlabel=\"pending updates of ", f);
	for (p = image; *p; p++)
		fprintf(f, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
	fputs(" (an arrow: must be on disk before)\";\n", f);
	fputs("\trankdir=LR;\n\tnode [shape=box, style=\"rounded,filled\", "
	      "fontname=\"monospace\", fontsize=10];\n", f);
	for (i = 0; i < g->n; i = j) {
		for (j = i; j < g->n && g->v[j].blk == g->v[i].blk; j++)
			;
		for (k = 0; i + k < j && !g->v[i + k].selected; k++)
			;
		if (i + k == j)
			continue;
		fprintf(f, "\tsubgraph cluster_%llu {\n\t\tlabel=\"block %llu (%s)\";\n",
			(unsigned long long)g->v[i].blk, (unsigned long long)g->v[i].blk,
			g->v[i].type);
		for (k = 0; i + k < j; k++) {
			const struct node *x = &g->v[i + k];
			if (!x->selected)
				continue;
			fprintf(f, "\t\tu%llu [label=\"#%llu %s\\nbytes %u+%u\\n%s, epoch %u\", "
				"fillcolor=\"%s\"];\n",
				(unsigned long long)x->id, (unsigned long long)x->id, x->kind, x->off,
				x->len, state_name(x->state), x->epoch,
				x->state == SUFS_DEP_READY ? "palegreen" : "lightpink");
		}
		fputs("\t}\n", f);
	}
	for (i = 0; i < g->n; i++) {
		const struct node *x = &g->v[i];
		if (!x->selected)
			continue;
		for (k = 0; k < x->nwaits; k++)
			fprintf(f, "\tu%llu -> u%llu;\n", (unsigned long long)g->v[x->waits[k]].id,
				(unsigned long long)x->id);
	}
	fputs("}\n", f);
}

/*
 * Render the graph to an SVG with dot(1), fed through a pipe.  Returns 0,
 * 1 after a message, or 127 when dot is not installed (nothing said).
 */
static int run_dot(const struct graph *g, const char *image, const char *svg)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	int fds[2], status, werr;
	pid_t pid;
	FILE *f;

	if (pipe(fds))
		return fail("deps", svg, "%s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return fail("deps", svg, "%s", strerror(errno));
	}
	if (pid == 0) {
		char *argv[] = { "dot", "-Tsvg", "-o", (char *)svg, NULL };
		dup2(fds[0], STDIN_FILENO);
		close(fds[0]);
		close(fds[1]);
		execvp("dot", argv);
		_exit(127);
	}
	close(fds[0]);
	sigaction(SIGPIPE, &ign, &old);  /* dot may be missing: no pipe reader */
	f = fdopen(fds[1], "w");
	if (f) {
		write_dot(f, g, image);
		werr = fclose(f);
	} else {
		close(fds[1]);
		werr = -1;
	}
	sigaction(SIGPIPE, &old, NULL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return 127;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return fail("deps", svg, "dot failed (exit status %d)",
			    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	if (werr)
		return fail("deps", svg, "writing to dot: %s", strerror(errno));
	return 0;
}

/* ------------------------------------------------------------------------ */
/* deps                                                                      */
/* ------------------------------------------------------------------------ */

static int deps_usage(const char *cmd)
{
	const struct command *c = command_find(cmd);
	return fail(cmd, NULL, "usage: %s%s%s", c->name, *c->args ? " " : "", c->args);
}

int cmd_deps(struct session *s, int argc, char **argv)
{
	enum { TABLE, CHAINS, DOT, SVG } how = TABLE;
	const char *file = NULL, *what = NULL;
	struct target t = { 0 };
	struct graph g;
	size_t i, own = 0, shown = 0, blocked = 0;
	int rc = 0, have_target = 0;

	for (i = 1; i < (size_t)argc; i++) {
		if (strcmp(argv[i], "--chains") == 0 && how == TABLE) {
			how = CHAINS;
		} else if ((strcmp(argv[i], "--dot") == 0 || strcmp(argv[i], "--svg") == 0) &&
			   how == TABLE && i + 1 < (size_t)argc) {
			how = argv[i][2] == 'd' ? DOT : SVG;
			file = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1] && !what) {
			return deps_usage(argv[0]);
		} else if (!what) {
			what = argv[i];
		} else {
			return deps_usage(argv[0]);
		}
	}
	if (what) {
		if (parse_target(s, argv[0], what, &t))
			return 1;
		have_target = 1;
	}
	rc = graph_load(s, &g);
	if (rc) {
		free(t.blocks);
		return fail(argv[0], what, "%s", sufs_strerror(rc));
	}
	if (have_target)
		own = select_target(&g, &t);
	for (i = 0; i < g.n; i++) {
		if (!have_target)
			g.v[i].selected = 1;
		shown += g.v[i].selected;
		blocked += g.v[i].selected && g.v[i].state == SUFS_DEP_BLOCKED;
	}

	if (how == DOT) {
		FILE *f = fopen(file, "w");
		if (!f) {
			rc = fail(argv[0], file, "%s", strerror(errno));
		} else {
			write_dot(f, &g, s->image);
			if (fclose(f))
				rc = fail(argv[0], file, "%s", strerror(errno));
		}
	} else if (how == SVG) {
		rc = run_dot(&g, s->image, file);
		if (rc == 127) {
			rc = fail(argv[0], file, "dot (Graphviz) is not installed: no SVG written; "
				  "the chains as text instead");
			print_chains(&g);
		}
	} else {
		if (!have_target && g.n == 0) {
			puts("no updates pending: the disk holds what memory holds, "
			     "but for times and counts");
		} else if (!have_target) {
			printf("%zu %s pending on %zu %s, %zu of them blocked; "
			       "a full flush takes %u %s\n", g.n, plural(g.n, "update", "updates"),
			       g.nblocks, plural(g.nblocks, "block", "blocks"), blocked, g.epochs,
			       plural(g.epochs, "epoch", "epochs"));
		} else if (t.is_block) {
			printf("%zu %s pending on block %llu; %zu shown with what waits for "
			       "them and what all of it waits for\n", own,
			       plural(own, "update", "updates"), (unsigned long long)t.blk, shown);
		} else {  /* the path as names are printed */
			printf("%zu %s pending on ", own, plural(own, "update", "updates"));
			print_name(stdout, what, strlen(what));
			printf(" (inode %u, its blocks); %zu shown with what waits for them "
			       "and what all of it waits for\n", t.ino, shown);
		}
		if (!have_target && g.nplain)
			printf("%zu more dirty %s with times and counts only\n", g.nplain,
			       plural(g.nplain, "block", "blocks"));
		if (shown && how == TABLE)
			print_table(&g);
		else if (shown)
			print_chains(&g);
	}
	free(t.blocks);
	graph_free(&g);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* why                                                                       */
/* ------------------------------------------------------------------------ */

int cmd_why(struct session *s, int argc, char **argv)
{
	char prefix[4096];
	struct target t;
	struct graph g;
	const char *type = "";
	size_t i, n = 0, undone = 0;
	unsigned k, last = 0;
	int rc;

	if (argc != 2 || argv[1][0] < '0' || argv[1][0] > '9')
		return deps_usage(argv[0]);
	if (parse_target(s, argv[0], argv[1], &t))
		return 1;
	rc = graph_load(s, &g);
	if (rc)
		return fail(argv[0], argv[1], "%s", sufs_strerror(rc));
	for (i = 0; i < g.n; i++) {
		struct node *x = &g.v[i];
		if (x->blk != t.blk)
			continue;
		n++;
		type = x->type;
		undone += x->state == SUFS_DEP_BLOCKED;
		if (x->epoch > last)
			last = x->epoch;
	}
	if (n == 0) {
		/* nothing ordered: dirty with plain changes at most */
		printf("block %llu: no update pending: nothing keeps it from going out as it "
		       "stands in memory\n", (unsigned long long)t.blk);
		graph_free(&g);
		return 0;
	}
	printf("block %llu (%s): %zu %s pending, ", (unsigned long long)t.blk, type, n,
	       plural(n, "update", "updates"));
	printf("%zu of them undone in its next write\n", undone);
	for (i = 0; i < g.n; i++) {
		struct node *x = &g.v[i];
		if (x->blk != t.blk || x->state != SUFS_DEP_BLOCKED)
			continue;
		print_node(x);
		puts(" waits for");
		x->printed = 1;
		for (k = 0; k < x->nwaits; k++) {
			memcpy(prefix, "    ", 4);
			print_chain(&g, &g.v[x->waits[k]], prefix, 4, k + 1 == x->nwaits, 0);
		}
	}
	if (undone)
		printf("its bytes in memory are all on disk after epoch %u of a full flush\n", last);
	else
		printf("its next write carries every pending update: on disk after epoch 1\n");
	graph_free(&g);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* flush                                                                     */
/* ------------------------------------------------------------------------ */

struct flush_report {
	size_t written, undone;
};

static int show_written(void *arg, const struct sufs_dep_block *b)
{
	struct flush_report *r = arg;
	size_t i, nw = 0, nu = 0;
	unsigned k;

	for (i = 0; i < b->ndeps; i++) {
		if (b->deps[i].state == SUFS_DEP_WRITTEN)
			nw++;
		else
			nu++;
	}
	r->written += nw;
	r->undone += nu;
	printf("  block %llu (%s): ", (unsigned long long)b->blk, b->type);
	if (b->ndeps == 0)
		puts("no ordered update: times and counts only");
	else
		printf("%zu went out, %zu undone%s\n", nw, nu,
		       b->plain ? " (and times and counts)" : "");
	for (i = 0; i < b->ndeps; i++) {
		const struct sufs_dep *d = &b->deps[i];
		printf("    #%llu %s bytes %u+%u: %s", (unsigned long long)d->id, d->kind, d->off,
		       d->len, state_name(d->state));
		if (d->state == SUFS_DEP_UNDONE) {
			fputs(", waits for", stdout);
			for (k = 0; k < d->nwaits; k++)
				printf(" #%llu", (unsigned long long)d->waits[k]);
		}
		putchar('\n');
	}
	return 0;
}

int cmd_flush(struct session *s, int argc, char **argv)
{
	struct sufs_stats st;
	uint32_t want = 1, e;
	int n;

	if (argc > 2)
		return deps_usage(argv[0]);
	if (argc == 2 && (parse_u32(argv[1], &want) || want == 0))
		return fail(argv[0], argv[1], "not a number of epochs");
	for (e = 0; e < want; e++) {
		struct flush_report r = { 0, 0 };
		sufs_get_stats(s->fs, &st);
		printf("epoch %llu:\n", (unsigned long long)st.epochs + 1);
		n = sufs_deps_flush(s->fs, show_written, &r);
		if (n < 0)
			return fail(argv[0], NULL, "%s", sufs_strerror(n));
		if (n == 0) {
			puts("  nothing to write");
			break;
		}
		printf("  %d %s written, ", n, plural((uint64_t)n, "block", "blocks"));
		printf("%zu %s went out, %zu undone\n", r.written,
		       plural(r.written, "update", "updates"), r.undone);
	}
	sufs_get_stats(s->fs, &st);
	printf("%llu %s pending on ", (unsigned long long)st.pending,
	       plural(st.pending, "update", "updates"));
	printf("%llu dirty %s\n", (unsigned long long)st.dirty_blocks,
	       plural(st.dirty_blocks, "block", "blocks"));
	return 0;
}

/* ------------------------------------------------------------------------ */
/* crash, stats                                                              */
/* ------------------------------------------------------------------------ */

int cmd_crash(struct session *s, int argc, char **argv)
{
	struct sufs_stats st;
	int rc;

	if (argc != 1)
		return deps_usage(argv[0]);
	sufs_get_stats(s->fs, &st);
	sufs_abandon(s->fs);
	s->fs = NULL;
	printf("dropped %llu pending updates and %llu dirty blocks\n",
	       (unsigned long long)st.pending, (unsigned long long)st.dirty_blocks);
	rc = session_open(s);
	if (rc) {
		s->quit = 1;
		return fail(argv[0], s->image, "cannot open it again: %s", sufs_strerror(rc));
	}
	s->cwd = sufs_get_super(s->fs)->root_ino;
	printf("reopened %s as the disk holds it; the current directory is /\n", s->image);
	return 0;
}

int cmd_stats(struct session *s, int argc, char **argv)
{
	struct sufs_stats st;

	if (argc != 1)
		return deps_usage(argv[0]);
	sufs_get_stats(s->fs, &st);
	printf("%-28s%llu\n", "Pending updates:", (unsigned long long)st.pending);
	printf("%-28s%llu\n", "Peak pending updates:", (unsigned long long)st.peak_pending);
	printf("%-28s%llu\n", "Dependency memory:", (unsigned long long)st.dep_bytes);
	printf("%-28s%llu\n", "Peak dependency memory:", (unsigned long long)st.peak_dep_bytes);
	printf("%-28s%llu\n", "Undo bytes:", (unsigned long long)st.undo_bytes);
	printf("%-28s%llu\n", "Peak undo bytes:", (unsigned long long)st.peak_undo_bytes);
	printf("%-28s%llu\n", "Deferred work waiting:", (unsigned long long)st.deferred);
	printf("%-28s%llu\n", "Updates created:", (unsigned long long)st.updates);
	printf("%-28s%llu\n", "Changes merged:", (unsigned long long)st.merged);
	printf("%-28s%llu\n", "Updates undone in writes:", (unsigned long long)st.undone);
	printf("%-28s%llu\n", "Waits made:", (unsigned long long)st.waits);
	printf("%-28s%llu\n", "Epochs:", (unsigned long long)st.epochs);
	printf("%-28s%llu\n", "Moves settled:", (unsigned long long)st.moves_settled);
	printf("%-28s%llu\n", "Block reads:", (unsigned long long)st.block_reads);
	printf("%-28s%llu\n", "Block writes:", (unsigned long long)st.block_writes);
	printf("%-28s%llu\n", "Barriers:", (unsigned long long)st.barriers);
	printf("%-28s%llu\n", "Cached blocks:", (unsigned long long)st.cache_blocks);
	printf("%-28s%llu\n", "Dirty blocks:", (unsigned long long)st.dirty_blocks);
	return 0;
}
