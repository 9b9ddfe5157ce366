/*
 * random.c - a random workload in the script language, in the manner of
 * fsstress: every operation, mostly succeeding, some failing on purpose.
 *
 * The generator keeps a model of the tree (every name, and what it names:
 * type, size, link count) and updates it as each line is generated, as if
 * the line had run.  So it names existing files where an operation needs
 * one, fresh names where it makes one, and knows which operations must
 * fail: those it writes with their expected error (`!ENOTEMPTY rmdir /d3`).
 * Nothing is read from the file system after the start: the lines depend
 * only on the seed and on the tree and free space found at the start.
 *
 * Space is budgeted so that no operation can run out of it: each line is
 * charged a generous estimate of the blocks and inodes it may take.  What
 * an unlink or a truncation frees comes back only at the next `sync`, since
 * soft updates return freed blocks only once no pointer to them is left
 * on disk; when the budget runs low the generator syncs.  Every name is
 * charged a whole block while it exists, for the directory that holds it:
 * far more than an entry takes, which covers the blocks a directory keeps
 * after its entries go (directories do not shrink).
 *
 * The tree read at the start may be one a crash left: a directory renamed
 * may have both its names.  The model keeps the first name it reads, and
 * the directory that holds the second is never taken for empty (so too a
 * directory with a name no path can hold).
 *
 * Extended attributes: files and directories get user.a to user.d (the
 * model keeps each one's length), small enough to stay in the inode, or
 * large enough to grow into a block and shrink back out of it; a file
 * whose attributes are in a block is charged that block.
 */
#include "config.h"

#include "random.h"
#include "script.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_NAMES      4000     /* the model's size: beyond it, names are removed */
#define MAX_DEPTH      6        /* new directories only this deep */
#define MAX_PARENT_LEN 2048     /* new names only in directories with shorter paths */
#define MAX_PATH_LEN   3584     /* no path longer (the library takes 4095) */
#define MAX_FILE_SIZE  (8u << 20)

enum ntype { N_REG, N_DIR, N_LNK, N_CHR, N_BLK, N_FIFO, N_SOCK };

#define XATTRS 4                /* user.a .. user.d */

struct node {                   /* an inode */
	enum ntype type;
	uint8_t xset;           /* bit k: user.<'a' + k> is set, xlen[k] bytes long */
	uint16_t xlen[XATTRS];
	uint32_t links;         /* names that reach it (directories: 1) */
	uint32_t ino;           /* found in the starting tree, else 0 */
	uint64_t size;          /* regular files */
	uint64_t charged;       /* blocks charged for its contents */
	int foreign;            /* a directory with entries the model leaves out */
};

struct name {
	char *path;             /* absolute, no trailing slash; "/" for the root */
	size_t node;
};

struct random_gen {
	uint64_t state;         /* SplitMix64 */
	struct node *nodes;
	size_t nnodes, nodes_cap;
	struct name *names;     /* names[0] is the root */
	size_t nnames, names_cap;
	size_t *pick;           /* scratch: candidates for a choice */
	uint32_t bsize;
	int xattr;              /* the image has extended attributes */
	uint8_t *dirs_seen;     /* while reading the tree: a bit per inode */
	uint32_t inodes_count;
	int64_t blocks_left, inodes_left;     /* the budget */
	int64_t blocks_freed, inodes_freed;   /* back at the next sync */
	unsigned counter;       /* for fresh names */
	int err;                /* out of memory while generating */
	char *line;
	size_t line_len;
	FILE *out;              /* the line being written */
};

/* ---- random numbers -------------------------------------------------------------- */

static uint64_t rnd(struct random_gen *g)
{
	uint64_t z = (g->state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* 0 .. n - 1 (n > 0) */
static uint64_t below(struct random_gen *g, uint64_t n)
{
	return rnd(g) % n;
}

/* true one time in n */
static int one_in(struct random_gen *g, unsigned n)
{
	return below(g, n) == 0;
}

/* ---- the model ----------------------------------------------------------------- */

static size_t node_new(struct random_gen *g, enum ntype type)
{
	if (g->nnodes == g->nodes_cap) {
		size_t cap = g->nodes_cap ? 2 * g->nodes_cap : 256;
		struct node *v = realloc(g->nodes, cap * sizeof(*v));
		if (!v) {
			g->err = -ENOMEM;
			return SIZE_MAX;
		}
		g->nodes = v;
		g->nodes_cap = cap;
	}
	memset(&g->nodes[g->nnodes], 0, sizeof(g->nodes[0]));
	g->nodes[g->nnodes].type = type;
	return g->nnodes++;
}

/* Add a name for node; takes path (malloc()ed). */
static void name_add(struct random_gen *g, char *path, size_t node)
{
	if (!path || node == SIZE_MAX) {
		free(path);
		g->err = -ENOMEM;
		return;
	}
	if (g->nnames == g->names_cap) {
		size_t cap = g->names_cap ? 2 * g->names_cap : 256;
		struct name *v = realloc(g->names, cap * sizeof(*v));
		size_t *p = realloc(g->pick, cap * sizeof(*p));
		if (p)
			g->pick = p;
		if (!v || !p) {
			if (v)
				g->names = v;
			free(path);
			g->err = -ENOMEM;
			return;
		}
		g->names = v;
		g->names_cap = cap;
	}
	g->names[g->nnames].path = path;
	g->names[g->nnames].node = node;
	g->nnames++;
	g->nodes[node].links++;
}

static void name_remove(struct random_gen *g, size_t i)
{
	free(g->names[i].path);
	g->names[i] = g->names[--g->nnames];
}

static struct node *node_of(struct random_gen *g, size_t name)
{
	return &g->nodes[g->names[name].node];
}

/* parent + "/" + name, malloc()ed */
static char *path_join(const char *parent, const char *name, size_t len)
{
	size_t plen = strcmp(parent, "/") == 0 ? 0 : strlen(parent);
	char *p = malloc(plen + 1 + len + 1);

	if (!p)
		return NULL;
	memcpy(p, parent, plen);
	p[plen] = '/';
	memcpy(p + plen + 1, name, len);
	p[plen + 1 + len] = '\0';
	return p;
}

/* Is path inside the directory dir (and not dir itself)? */
static int is_under(const char *path, const char *dir)
{
	size_t dlen = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return strcmp(path, "/") != 0;
	return strncmp(path, dir, dlen) == 0 && path[dlen] == '/';
}

/* Is path a direct entry of dir? */
static int is_child(const char *path, const char *dir)
{
	return is_under(path, dir) && !strchr(path + strlen(dir) + 1, '/');
}

static size_t name_find(struct random_gen *g, const char *path)
{
	size_t i;

	for (i = 0; i < g->nnames; i++)
		if (strcmp(g->names[i].path, path) == 0)
			return i;
	return SIZE_MAX;
}

static int dir_empty(struct random_gen *g, const char *dir)
{
	size_t i = name_find(g, dir);

	if (i != SIZE_MAX && node_of(g, i)->foreign)
		return 0;
	for (i = 0; i < g->nnames; i++)
		if (is_child(g->names[i].path, dir))
			return 0;
	return 1;
}

static unsigned depth(const char *path)
{
	unsigned d = 0;

	if (strcmp(path, "/") == 0)
		return 0;
	for (; *path; path++)
		d += *path == '/';
	return d;
}

/* The blocks charged for a name (see the top of the file). */
#define NAME_BLOCKS 1

static uint64_t data_charged(const struct node *n);

/* A node is gone: its inode and blocks come back at the next sync. */
static void node_free(struct random_gen *g, size_t node)
{
	struct node *n = &g->nodes[node];

	g->blocks_freed += (int64_t)n->charged;
	g->inodes_freed++;
	n->charged = 0;
	n->xset = 0;
}

/* One name of node fewer; the node goes with its last. */
static void unlink_name(struct random_gen *g, size_t i)
{
	size_t node = g->names[i].node;

	name_remove(g, i);
	g->blocks_freed += NAME_BLOCKS;
	if (--g->nodes[node].links == 0)
		node_free(g, node);
}

/* ---- choices ------------------------------------------------------------------------- */

typedef int (*name_filter)(struct random_gen *g, size_t i);

/* A random name that passes the filter, or SIZE_MAX. */
static size_t pick_name(struct random_gen *g, name_filter want)
{
	size_t i, n = 0;

	for (i = 0; i < g->nnames; i++)
		if (want(g, i))
			g->pick[n++] = i;
	return n ? g->pick[below(g, n)] : SIZE_MAX;
}

static int is_dir(struct random_gen *g, size_t i)
{
	return node_of(g, i)->type == N_DIR;
}

/* A directory that may get a new entry. */
static int is_parent(struct random_gen *g, size_t i)
{
	return is_dir(g, i) && strlen(g->names[i].path) < MAX_PARENT_LEN;
}

/* A directory that may get a new subdirectory. */
static int is_mkdir_parent(struct random_gen *g, size_t i)
{
	return is_parent(g, i) && depth(g->names[i].path) < MAX_DEPTH;
}

static int is_file(struct random_gen *g, size_t i)
{
	return node_of(g, i)->type == N_REG;
}

/* Not a directory (the root is one): what unlink and link may name. */
static int is_nondir(struct random_gen *g, size_t i)
{
	return !is_dir(g, i);
}

/* Not a symbolic link: what chmod, chown, utimes and fsync may name
 * without following a link the model does not resolve. */
static int is_nonlink(struct random_gen *g, size_t i)
{
	return node_of(g, i)->type != N_LNK;
}

static int is_subdir(struct random_gen *g, size_t i)
{
	return is_dir(g, i) && i != 0;
}

static int is_empty_subdir(struct random_gen *g, size_t i)
{
	return is_subdir(g, i) && dir_empty(g, g->names[i].path);
}

static int is_full_subdir(struct random_gen *g, size_t i)
{
	return is_subdir(g, i) && !dir_empty(g, g->names[i].path);
}

/* A directory with a subdirectory in it, somewhere below. */
static int has_subdir(struct random_gen *g, size_t i)
{
	size_t j;

	if (!is_subdir(g, i))
		return 0;
	for (j = 0; j < g->nnames; j++)
		if (is_dir(g, j) && is_under(g->names[j].path, g->names[i].path))
			return 1;
	return 0;
}

static int any_name(struct random_gen *g, size_t i)
{
	(void)g;
	return i != 0;
}

/* ---- fresh names ----------------------------------------------------------------- */

/*
 * A name not in dir, made from a prefix letter and a counter; one time in
 * twelve it has something a script must quote (a blank, a quote, a
 * backslash, a '#', a control byte, UTF-8, a byte that is not UTF-8) or
 * is as long as a name may be.  Returns its path (malloc()ed).
 */
static char *fresh_path(struct random_gen *g, const char *dir, char prefix)
{
	static const char *const odd[] = {
		"with space %c%u", "quo\"te %c%u", "back\\slash%c%u", "#hash%c%u",
		"tab\tand\nnewline%c%u", "\x01\x1f""ctl%c%u", "\xc3\xbcnic\xc3\xb8""de%c%u",
		"\xff\xfe""bin%c%u", "-dash%c%u", "!bang%c%u",
	};
	char name[SUFS_NAME_MAX + 1];
	char *path;

	for (;;) {
		unsigned n = ++g->counter;
		size_t len;

		if (one_in(g, 12)) {
			if (one_in(g, 4)) {
				len = (size_t)snprintf(name, sizeof(name), "%c%u", prefix, n);
				memset(name + len, 'L', SUFS_NAME_MAX - len);
				len = SUFS_NAME_MAX;
				name[len] = '\0';
			} else {
				len = (size_t)snprintf(name, sizeof(name),
						       odd[below(g, sizeof(odd) / sizeof(odd[0]))],
						       prefix, n);
			}
		} else {
			len = (size_t)snprintf(name, sizeof(name), "%c%u", prefix, n);
		}
		path = path_join(dir, name, len);
		if (!path) {
			g->err = -ENOMEM;
			return NULL;
		}
		if (name_find(g, path) == SIZE_MAX)
			return path;
		free(path);   /* the starting tree has it: try the next number */
	}
}

/* ---- writing a line ------------------------------------------------------------------ */

static void line_begin(struct random_gen *g, const char *expect, const char *op)
{
	if (expect)
		fprintf(g->out, "!%s ", expect);
	fputs(op, g->out);
}

static void word(struct random_gen *g, const char *w)
{
	fputc(' ', g->out);
	script_quote(g->out, w, strlen(w));
}

static void number(struct random_gen *g, const char *fmt, uint64_t v)
{
	fputc(' ', g->out);
	fprintf(g->out, fmt, (unsigned long long)v);
}

/* ---- the budget ------------------------------------------------------------------------- */

/* Can blocks and inodes be spent?  If so, they are. */
static int spend(struct random_gen *g, uint64_t blocks, uint64_t inodes)
{
	if ((int64_t)blocks > g->blocks_left || (int64_t)inodes > g->inodes_left)
		return 0;
	g->blocks_left -= (int64_t)blocks;
	g->inodes_left -= (int64_t)inodes;
	return 1;
}

/* The most blocks a file of this size can hold: every block mapped (holes
 * counted as if written), and its indirect blocks at every level. */
static uint64_t file_blocks(const struct random_gen *g, uint64_t size)
{
	uint64_t n = (size + g->bsize - 1) / g->bsize, per = g->bsize / 8;

	return n ? n + n / per + n / (per * per) + 3 : 0;
}

/* ---- the operations -------------------------------------------------------------------- */

/*
 * Each generator writes one line and updates the model, and returns 1; or
 * returns 0, having written nothing, when the model offers nothing it can
 * work on (or the budget is spent), so that another is tried.
 */

/* create, mknod, symlink: a new non-directory in a random directory. */
static int gen_create(struct random_gen *g)
{
	size_t dir = pick_name(g, is_parent), node;
	char *path;

	if (dir == SIZE_MAX || g->nnames >= MAX_NAMES || !spend(g, NAME_BLOCKS, 1))
		return 0;
	path = fresh_path(g, g->names[dir].path, 'f');
	node = node_new(g, N_REG);
	if (!path || node == SIZE_MAX) {
		free(path);
		return 1;
	}
	line_begin(g, NULL, "create");
	word(g, path);
	if (one_in(g, 3))
		number(g, "%04llo", below(g, 01000));
	name_add(g, path, node);
	return 1;
}

static int gen_mkdir(struct random_gen *g)
{
	size_t dir = pick_name(g, is_mkdir_parent), node;
	char *path;

	if (dir == SIZE_MAX || g->nnames >= MAX_NAMES || !spend(g, NAME_BLOCKS + 1, 1))
		return 0;
	path = fresh_path(g, g->names[dir].path, 'd');
	node = node_new(g, N_DIR);
	if (!path || node == SIZE_MAX) {
		free(path);
		return 1;
	}
	g->nodes[node].charged = 1;   /* its first block */
	line_begin(g, NULL, "mkdir");
	word(g, path);
	if (one_in(g, 3))
		number(g, "%04llo", 0700 | below(g, 0100));
	name_add(g, path, node);
	return 1;
}

static int gen_mknod(struct random_gen *g)
{
	static const struct {
		const char *letter;
		enum ntype type;
	} kinds[] = { { "c", N_CHR }, { "b", N_BLK }, { "p", N_FIFO }, { "s", N_SOCK } };
	size_t dir = pick_name(g, is_parent), node, k = below(g, 4);
	char *path;

	if (dir == SIZE_MAX || g->nnames >= MAX_NAMES || !spend(g, NAME_BLOCKS, 1))
		return 0;
	path = fresh_path(g, g->names[dir].path, 'n');
	node = node_new(g, kinds[k].type);
	if (!path || node == SIZE_MAX) {
		free(path);
		return 1;
	}
	line_begin(g, NULL, "mknod");
	word(g, path);
	word(g, kinds[k].letter);
	if (k < 2) {
		number(g, "%llu", below(g, 256));
		number(g, "%llu", below(g, 256));
	}
	if (one_in(g, 2))
		number(g, "%04llo", below(g, 01000));
	name_add(g, path, node);
	return 1;
}

static int gen_symlink(struct random_gen *g)
{
	size_t dir = pick_name(g, is_parent), node, other, len;
	char target[512];
	char *path;
	int slow = one_in(g, 6);

	if (dir == SIZE_MAX || g->nnames >= MAX_NAMES || !spend(g, NAME_BLOCKS + (slow ? 1 : 0), 1))
		return 0;
	/* a target that exists or not: the workload never follows it */
	other = below(g, g->nnames);
	len = (size_t)snprintf(target, sizeof(target), "%s%s", one_in(g, 2) ? "" : "../",
			       other == 0 ? "." : g->names[other].path + 1);
	if (len == 0 || len >= sizeof(target))
		len = (size_t)snprintf(target, sizeof(target), "nowhere");
	if (slow) {
		/* longer than fits in the inode: the target gets a block */
		while (len < SUFS_FAST_SYMLINK_MAX + 40 && len + 2 < sizeof(target)) {
			target[len++] = '/';
			target[len++] = 'x';
		}
		target[len] = '\0';
	}
	path = fresh_path(g, g->names[dir].path, 's');
	node = node_new(g, N_LNK);
	if (!path || node == SIZE_MAX) {
		free(path);
		return 1;
	}
	g->nodes[node].charged = slow ? 1 : 0;
	line_begin(g, NULL, "symlink");
	word(g, target);
	word(g, path);
	name_add(g, path, node);
	return 1;
}

static int gen_link(struct random_gen *g)
{
	size_t src = pick_name(g, is_nondir), dir = pick_name(g, is_parent);
	char *path;

	if (src == SIZE_MAX || dir == SIZE_MAX || g->nnames >= MAX_NAMES ||
	    !spend(g, NAME_BLOCKS, 0))
		return 0;
	path = fresh_path(g, g->names[dir].path, 'h');
	if (!path)
		return 1;
	line_begin(g, NULL, "link");
	word(g, g->names[src].path);
	word(g, path);
	name_add(g, path, g->names[src].node);
	return 1;
}

static int gen_write(struct random_gen *g)
{
	size_t f = pick_name(g, is_file);
	struct node *n;
	uint64_t off, len, need, cost;

	if (f == SIZE_MAX)
		return 0;
	n = node_of(g, f);
	switch (below(g, 8)) {
	case 0:   /* far beyond the end: a hole before it */
		off = below(g, MAX_FILE_SIZE / 2);
		break;
	case 1:
	case 2:   /* append */
		off = n->size;
		break;
	default:  /* somewhere in the file */
		off = below(g, n->size + 1);
		break;
	}
	switch (below(g, 16)) {
	case 0:
		len = 1 + below(g, 1u << 20);
		break;
	case 1:
	case 2:
		len = 1 + below(g, 256u << 10);
		break;
	default:
		len = 1 + below(g, 16u << 10);
		break;
	}
	if (off >= MAX_FILE_SIZE)
		off = below(g, MAX_FILE_SIZE / 2);
	if (off + len > MAX_FILE_SIZE)
		len = MAX_FILE_SIZE - off;
	/* the file can only hold what its new size allows: charge the rest */
	need = file_blocks(g, off + len > n->size ? off + len : n->size);
	cost = need > data_charged(n) ? need - data_charged(n) : 0;
	if (!spend(g, cost, 0))
		return 0;
	n->charged += cost;
	if (off + len > n->size)
		n->size = off + len;
	line_begin(g, NULL, "write");
	word(g, g->names[f].path);
	number(g, "%llu", off);
	number(g, "%llu", len);
	number(g, "%llu", below(g, 1000));
	return 1;
}

static int gen_truncate(struct random_gen *g)
{
	size_t f = pick_name(g, is_file);
	struct node *n;
	uint64_t size;

	if (f == SIZE_MAX)
		return 0;
	n = node_of(g, f);
	switch (below(g, 4)) {
	case 0:
		size = 0;
		break;
	case 1:   /* longer: a hole at the end */
		size = n->size + below(g, 1u << 20);
		break;
	default:
		size = below(g, n->size + 1);
		break;
	}
	if (size > MAX_FILE_SIZE)
		size = MAX_FILE_SIZE;
	/* a shrink frees blocks (back at the next sync); a grow makes a hole */
	if (file_blocks(g, size) < data_charged(n)) {
		g->blocks_freed += (int64_t)(data_charged(n) - file_blocks(g, size));
		n->charged -= data_charged(n) - file_blocks(g, size);
	}
	n->size = size;
	line_begin(g, NULL, "truncate");
	word(g, g->names[f].path);
	number(g, "%llu", size);
	return 1;
}

static int gen_unlink(struct random_gen *g)
{
	size_t i = pick_name(g, is_nondir);

	if (i == SIZE_MAX)
		return 0;
	line_begin(g, NULL, "unlink");
	word(g, g->names[i].path);
	unlink_name(g, i);
	return 1;
}

static int gen_rmdir(struct random_gen *g)
{
	size_t i = pick_name(g, is_empty_subdir);

	if (i == SIZE_MAX)
		return 0;
	line_begin(g, NULL, "rmdir");
	word(g, g->names[i].path);
	unlink_name(g, i);
	return 1;
}

/* The longest path of path and the names under it. */
static size_t longest_under(struct random_gen *g, const char *path)
{
	size_t i, max = strlen(path);

	for (i = 0; i < g->nnames; i++)
		if (is_under(g->names[i].path, path) && strlen(g->names[i].path) > max)
			max = strlen(g->names[i].path);
	return max;
}

/* Give every name under old (old included) the prefix new instead. */
static void move_tree(struct random_gen *g, const char *old, const char *new)
{
	size_t i, olen = strlen(old), nlen = strlen(new);

	for (i = 0; i < g->nnames; i++) {
		char *p = g->names[i].path, *q;
		if (strcmp(p, old) != 0 && !is_under(p, old))
			continue;
		q = malloc(nlen + strlen(p + olen) + 1);
		if (!q) {
			g->err = -ENOMEM;
			return;
		}
		memcpy(q, new, nlen);
		strcpy(q + nlen, p + olen);
		free(p);
		g->names[i].path = q;
	}
}

/*
 * rename: a non-directory to a fresh name or over another non-directory;
 * a directory to a fresh name in a directory outside itself, or over an
 * empty directory.  Two names of one inode are never renamed onto each
 * other (POSIX makes that do nothing; it teaches nothing).
 */
static int gen_rename(struct random_gen *g)
{
	size_t src = pick_name(g, any_name), dst = SIZE_MAX, dir, i;
	const char *spath;
	char *dpath = NULL, *old;

	if (src == SIZE_MAX)
		return 0;
	spath = g->names[src].path;
	if (one_in(g, 3)) {
		/* over an existing name of the same kind */
		size_t n = 0;
		for (i = 1; i < g->nnames; i++) {
			if (i == src || g->names[i].node == g->names[src].node ||
			    is_dir(g, i) != is_dir(g, src))
				continue;
			if (is_dir(g, i) && (!dir_empty(g, g->names[i].path) ||
					     is_under(g->names[i].path, spath)))
				continue;
			g->pick[n++] = i;
		}
		if (n)
			dst = g->pick[below(g, n)];
	}
	if (dst != SIZE_MAX) {
		dpath = strdup(g->names[dst].path);
		if (!dpath) {
			g->err = -ENOMEM;
			return 1;
		}
	} else {
		size_t n = 0;
		for (i = 0; i < g->nnames; i++)
			if (is_parent(g, i) && strcmp(g->names[i].path, spath) != 0 &&
			    !is_under(g->names[i].path, spath) &&
			    (!is_dir(g, src) || depth(g->names[i].path) < MAX_DEPTH))
				g->pick[n++] = i;
		if (!n)
			return 0;
		dir = g->pick[below(g, n)];
		dpath = fresh_path(g, g->names[dir].path, 'r');
		if (!dpath)
			return 1;
	}
	if (longest_under(g, spath) - strlen(spath) + strlen(dpath) >= MAX_PATH_LEN) {
		free(dpath);
		return 0;   /* the tree would get too deep for a path */
	}
	line_begin(g, NULL, "rename");
	word(g, spath);
	word(g, dpath);
	if (dst != SIZE_MAX) {
		unlink_name(g, dst);
		src = name_find(g, spath);  /* the removal may have moved it */
	}
	old = strdup(g->names[src].path);
	if (!old) {
		free(dpath);
		g->err = -ENOMEM;
		return 1;
	}
	move_tree(g, old, dpath);
	free(old);
	free(dpath);
	return 1;
}

static int gen_chmod(struct random_gen *g)
{
	size_t i = pick_name(g, is_nonlink);

	if (i == SIZE_MAX)
		return 0;
	line_begin(g, NULL, "chmod");
	number(g, "%04llo", one_in(g, 8) ? below(g, 010000) : below(g, 01000));
	word(g, g->names[i].path);
	return 1;
}

static int gen_chown(struct random_gen *g)
{
	size_t i = pick_name(g, is_nonlink);

	if (i == SIZE_MAX)
		return 0;
	line_begin(g, NULL, "chown");
	fprintf(g->out, " %llu:%llu", (unsigned long long)below(g, 2000),
		(unsigned long long)below(g, 2000));
	word(g, g->names[i].path);
	return 1;
}

static int gen_utimes(struct random_gen *g)
{
	size_t i = pick_name(g, is_nonlink);
	int k;

	if (i == SIZE_MAX)
		return 0;
	line_begin(g, NULL, "utimes");
	word(g, g->names[i].path);
	for (k = 0; k < 2; k++) {
		fprintf(g->out, " %llu", (unsigned long long)below(g, 2000000000u));
		if (one_in(g, 2))
			fprintf(g->out, ".%09llu", (unsigned long long)below(g, 1000000000u));
	}
	return 1;
}

static int gen_fsync(struct random_gen *g)
{
	size_t i = pick_name(g, is_nonlink);

	if (i == SIZE_MAX)
		return 0;
	line_begin(g, NULL, "fsync");
	word(g, g->names[i].path);
	return 1;
}

static int gen_sync(struct random_gen *g)
{
	line_begin(g, NULL, "sync");
	g->blocks_left += g->blocks_freed;
	g->inodes_left += g->inodes_freed;
	g->blocks_freed = g->inodes_freed = 0;
	return 1;
}

/* ---- extended attributes ------------------------------------------------------------- */

/* The bytes a node's attributes take, as they are stored (man/sufs.5):
 * in the inode when at most SUFS_XATTR_INLINE, else in a block. */
static size_t xattr_bytes(const struct node *n)
{
	size_t total = 0;
	unsigned k;

	for (k = 0; k < XATTRS; k++)
		if (n->xset & (1u << k))
			total += (SUFS_XATTR_ENTRY_HDR + 1 + n->xlen[k] + 3u) & ~3u;
	return total;
}

/* The blocks charged for a node's contents: all but its attribute block. */
static uint64_t data_charged(const struct node *n)
{
	return n->charged - (xattr_bytes(n) > SUFS_XATTR_INLINE);
}

static int is_xattr_owner(struct random_gen *g, size_t i)
{
	return g->xattr && (node_of(g, i)->type == N_REG || node_of(g, i)->type == N_DIR);
}

static int has_xattr(struct random_gen *g, size_t i)
{
	return is_xattr_owner(g, i) && node_of(g, i)->xset;
}

/* A value of len bytes the script takes as it is: letters and digits,
 * a letter first (a word that starts with 0x would be hex). */
static void value_word(struct random_gen *g, size_t len)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t i;

	fputc(' ', g->out);
	if (!len)
		fputs("\"\"", g->out);
	for (i = 0; i < len; i++)
		fputc(chars[below(g, i ? sizeof(chars) - 1 : 26)], g->out);
}

/*
 * A node's attributes change (set k to len bytes, or, len < 0, remove
 * it): the block it may gain is spent (0 when there is none to spend, or
 * when they would not fit in a block); one it gives up comes back at the
 * next sync.
 */
static int xattr_change(struct random_gen *g, struct node *n, unsigned k, long len)
{
	int before = xattr_bytes(n) > SUFS_XATTR_INLINE, after;
	struct node m = *n;

	if (len < 0) {
		m.xset &= (uint8_t)~(1u << k);
	} else {
		m.xset |= (uint8_t)(1u << k);
		m.xlen[k] = (uint16_t)len;
	}
	if (xattr_bytes(&m) > g->bsize - SUFS_XATTR_BLOCK_HDR - 4)
		return 0;
	after = xattr_bytes(&m) > SUFS_XATTR_INLINE;
	if (after && !before && !spend(g, 1, 0))
		return 0;
	if (before && !after)
		g->blocks_freed++;
	n->charged += (uint64_t)(after - before); /* freed with the node */
	n->xset = m.xset;
	memcpy(n->xlen, m.xlen, sizeof(n->xlen));
	return 1;
}

/* setxattr: a short value (in the inode), or one that takes a block, or
 * (rarely) half a block; now and then with create (a new one) or replace
 * (one that is there), which then succeeds. */
static int gen_setxattr(struct random_gen *g)
{
	size_t i = pick_name(g, is_xattr_owner);
	unsigned k = (unsigned)below(g, XATTRS);
	char name[8] = "user.a";
	struct node *n;
	long len;
	int was;

	if (i == SIZE_MAX)
		return 0;
	n = node_of(g, i);
	was = (n->xset >> k) & 1;
	switch (below(g, 8)) {
	case 0:
	case 1:
		len = 20 + (long)below(g, 200);
		break;
	case 2:
		len = (long)below(g, g->bsize / 2);
		break;
	default:
		len = (long)below(g, 9);
	}
	if (!xattr_change(g, n, k, len))
		return 0;
	name[5] = (char)('a' + k);
	line_begin(g, NULL, "setxattr");
	word(g, g->names[i].path);
	word(g, name);
	value_word(g, (size_t)len);
	if (one_in(g, 4))
		word(g, was ? "replace" : "create");
	return 1;
}

static int gen_rmxattr(struct random_gen *g)
{
	size_t i = pick_name(g, has_xattr);
	char name[8] = "user.a";
	struct node *n;
	unsigned k;

	if (i == SIZE_MAX)
		return 0;
	n = node_of(g, i);
	for (k = (unsigned)below(g, XATTRS); !(n->xset & (1u << k)); k = (k + 1) % XATTRS)
		;
	xattr_change(g, n, k, -1);
	name[5] = (char)('a' + k);
	line_begin(g, NULL, "rmxattr");
	word(g, g->names[i].path);
	word(g, name);
	return 1;
}

static int is_special(struct random_gen *g, size_t i)
{
	enum ntype t = node_of(g, i)->type;
	return t == N_CHR || t == N_BLK || t == N_FIFO || t == N_SOCK;
}

/* The errors of the attribute calls: ENODATA (none such to remove or
 * replace), EEXIST (create over one), EOPNOTSUPP (an unknown namespace),
 * ENOSPC (a value no block holds), EPERM (user. on a special file).
 * Nothing changes. */
static int fail_xattr(struct random_gen *g)
{
	size_t i = pick_name(g, is_xattr_owner), j;
	unsigned k = (unsigned)below(g, XATTRS);
	char name[8] = "user.a";
	int set;

	if (i == SIZE_MAX)
		return 0;
	set = (node_of(g, i)->xset >> k) & 1;
	name[5] = (char)('a' + k);
	switch (below(g, 6)) {
	case 0:
		if (set)
			return 0;
		line_begin(g, "ENODATA", "rmxattr");
		word(g, g->names[i].path);
		word(g, name);
		return 1;
	case 1:
		if (set)
			return 0;
		line_begin(g, "ENODATA", "setxattr");
		word(g, g->names[i].path);
		word(g, name);
		value_word(g, 1 + below(g, 8));
		word(g, "replace");
		return 1;
	case 2:
		if (!set)
			return 0;
		line_begin(g, "EEXIST", "setxattr");
		word(g, g->names[i].path);
		word(g, name);
		value_word(g, 1 + below(g, 8));
		word(g, "create");
		return 1;
	case 3:
		line_begin(g, "EOPNOTSUPP", "setxattr");
		word(g, g->names[i].path);
		word(g, "other.a");
		value_word(g, 1);
		return 1;
	case 4:
		line_begin(g, "ENOSPC", "setxattr");
		word(g, g->names[i].path);
		word(g, name);
		value_word(g, g->bsize);
		return 1;
	default:
		j = pick_name(g, is_special);
		if (j == SIZE_MAX)
			return 0;
		line_begin(g, "EPERM", "setxattr");
		word(g, g->names[j].path);
		word(g, name);
		value_word(g, 1);
		return 1;
	}
}

/* ---- operations that must fail ------------------------------------------------------ */

/* A name that exists, made again: EEXIST. */
static int fail_exists(struct random_gen *g)
{
	static const char *const ops[] = { "mkdir", "create", "symlink" };
	size_t i = pick_name(g, any_name);
	unsigned k = (unsigned)below(g, 3);

	/* the library may take an inode and a block before it finds the name,
	 * and give them back like any freed ones */
	if (i == SIZE_MAX || !spend(g, 1, 1))
		return 0;
	g->blocks_freed++;
	g->inodes_freed++;
	line_begin(g, "EEXIST", ops[k]);
	if (k == 2)
		word(g, "target");
	word(g, g->names[i].path);
	return 1;
}

/* A name that does not exist, or a new name in a directory that does not:
 * ENOENT. */
static int fail_missing(struct random_gen *g)
{
	static const char *const ops[] = { "unlink", "rmdir", "create", "fsync", "chmod" };
	unsigned k = (unsigned)below(g, 5);
	char *path = fresh_path(g, "/", 'm'), *deeper;

	if (!path)
		return 1;
	if (k == 2) {
		/* the missing one is the directory */
		deeper = path_join(path, "x", 1);
		free(path);
		if (!(path = deeper)) {
			g->err = -ENOMEM;
			return 1;
		}
	}
	line_begin(g, "ENOENT", ops[k]);
	if (k == 4)
		word(g, "0644");
	word(g, path);
	free(path);
	return 1;
}

/* A file used as a directory: ENOTDIR. */
static int fail_notdir(struct random_gen *g)
{
	size_t i = pick_name(g, is_file);
	char *path;

	if (i == SIZE_MAX)
		return 0;
	if (one_in(g, 2)) {
		line_begin(g, "ENOTDIR", "rmdir");
		word(g, g->names[i].path);
		return 1;
	}
	path = path_join(g->names[i].path, "x", 1);
	if (!path) {
		g->err = -ENOMEM;
		return 1;
	}
	line_begin(g, "ENOTDIR", one_in(g, 2) ? "mkdir" : "create");
	word(g, path);
	free(path);
	return 1;
}

/* A directory used as a file: EISDIR (unlink, write, truncate) or EPERM
 * (link). */
static int fail_isdir(struct random_gen *g)
{
	size_t i = pick_name(g, is_subdir);
	char *path;

	if (i == SIZE_MAX)
		return 0;
	switch (below(g, 4)) {
	case 0:
		line_begin(g, "EISDIR", "unlink");
		word(g, g->names[i].path);
		break;
	case 1:
		line_begin(g, "EISDIR", "write");
		word(g, g->names[i].path);
		fputs(" 0 1", g->out);
		break;
	case 2:
		line_begin(g, "EISDIR", "truncate");
		word(g, g->names[i].path);
		fputs(" 0", g->out);
		break;
	default:
		path = fresh_path(g, "/", 'h');
		if (!path)
			return 1;
		line_begin(g, "EPERM", "link");
		word(g, g->names[i].path);
		word(g, path);
		free(path);
		break;
	}
	return 1;
}

static int fail_notempty(struct random_gen *g)
{
	size_t i = pick_name(g, is_full_subdir);

	if (i == SIZE_MAX)
		return 0;
	line_begin(g, "ENOTEMPTY", "rmdir");
	word(g, g->names[i].path);
	return 1;
}

/* A directory moved into its own tree: EINVAL. */
static int fail_into_itself(struct random_gen *g)
{
	size_t i = pick_name(g, has_subdir), j, n = 0;
	char *path;

	if (i == SIZE_MAX)
		return 0;
	for (j = 0; j < g->nnames; j++)
		if (is_dir(g, j) && is_under(g->names[j].path, g->names[i].path))
			g->pick[n++] = j;
	j = g->pick[below(g, n)];
	path = fresh_path(g, g->names[j].path, 'r');
	if (!path)
		return 1;
	line_begin(g, "EINVAL", "rename");
	word(g, g->names[i].path);
	word(g, path);
	free(path);
	return 1;
}

static int fail_too_long(struct random_gen *g)
{
	char name[SUFS_NAME_MAX + 2];
	size_t dir = pick_name(g, is_parent);
	char *path;

	if (dir == SIZE_MAX)
		return 0;
	memset(name, 'N', SUFS_NAME_MAX + 1);
	name[SUFS_NAME_MAX + 1] = '\0';
	path = path_join(g->names[dir].path, name, SUFS_NAME_MAX + 1);
	if (!path) {
		g->err = -ENOMEM;
		return 1;
	}
	line_begin(g, "ENAMETOOLONG", one_in(g, 2) ? "create" : "mkdir");
	word(g, path);
	free(path);
	return 1;
}

/* ---- the mix ------------------------------------------------------------------------ */

static const struct {
	int (*gen)(struct random_gen *g);
	unsigned weight;
} mix[] = {
	{ gen_create, 12 }, { gen_mkdir, 6 }, { gen_mknod, 2 }, { gen_symlink, 4 },
	{ gen_link, 4 }, { gen_write, 20 }, { gen_truncate, 5 }, { gen_unlink, 8 },
	{ gen_rename, 8 }, { gen_rmdir, 4 }, { gen_chmod, 3 }, { gen_chown, 2 },
	{ gen_utimes, 3 }, { gen_fsync, 4 }, { gen_sync, 1 },
	{ fail_exists, 2 }, { fail_missing, 2 }, { fail_notdir, 1 }, { fail_isdir, 1 },
	{ fail_notempty, 1 }, { fail_into_itself, 1 }, { fail_too_long, 1 },
	{ gen_setxattr, 5 }, { gen_rmxattr, 2 }, { fail_xattr, 1 },
};

const char *random_next(struct random_gen *g)
{
	unsigned total = 0, r, k;
	int done = 0;
	size_t i;

	free(g->line);
	g->line = NULL;
	g->out = open_memstream(&g->line, &g->line_len);
	if (!g->out)
		return NULL;
	for (i = 0; i < sizeof(mix) / sizeof(mix[0]); i++)
		total += mix[i].weight;
	/* at the size limit, or short of space, remove instead of adding */
	if (g->nnames >= MAX_NAMES)
		done = gen_unlink(g) || gen_rmdir(g);
	else if ((g->blocks_left < 64 && g->blocks_freed >= 16) ||
		 (g->inodes_left < 4 && g->inodes_freed > 0))
		done = gen_sync(g);
	while (!done) {
		r = (unsigned)below(g, total);
		for (k = 0; r >= mix[k].weight; k++)
			r -= mix[k].weight;
		done = mix[k].gen(g);
	}
	if (fclose(g->out) || g->err) {
		g->out = NULL;
		return NULL;
	}
	g->out = NULL;
	return g->line;
}

/* ---- the starting tree --------------------------------------------------------------- */

/* Was directory inode ino seen before while reading the tree?  It is now. */
static int bit_test_set(struct random_gen *g, uint32_t ino)
{
	uint8_t bit = (uint8_t)(1u << (ino % 8));
	int seen;

	if (ino >= g->inodes_count + 1u)
		return 1;   /* not an inode of this file system: leave it alone */
	seen = (g->dirs_seen[ino / 8] & bit) != 0;
	g->dirs_seen[ino / 8] |= bit;
	return seen;
}

struct walk {
	struct random_gen *g;
	struct sufs_fs *fs;
	const char *dir;          /* path of the directory read */
	uint32_t dir_ino;         /* its inode */
	size_t dir_node;          /* and its node */
	struct subdir {           /* its subdirectories, to read next */
		char *path;
		uint32_t ino;
		size_t node;
	} *subdirs;
	size_t nsub, subcap;
};

static enum ntype type_of(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return N_DIR;
	case S_IFLNK: return N_LNK;
	case S_IFCHR: return N_CHR;
	case S_IFBLK: return N_BLK;
	case S_IFIFO: return N_FIFO;
	case S_IFSOCK: return N_SOCK;
	default: return N_REG;
	}
}

/* The attributes user.a .. user.d of a node of the starting tree (others
 * it may have are not modelled); one in a block is charged with it. */
static void xattrs_found(struct random_gen *g, struct sufs_fs *fs, struct node *n)
{
	char name[8] = "user.a";
	size_t len;
	unsigned k;

	if (!g->xattr)
		return;
	for (k = 0; k < XATTRS; k++) {
		name[5] = (char)('a' + k);
		if (sufs_getxattr(fs, n->ino, name, NULL, 0, &len, NULL) == 0) {
			n->xset |= (uint8_t)(1u << k);
			n->xlen[k] = (uint16_t)len;
		}
	}
	n->charged += xattr_bytes(n) > SUFS_XATTR_INLINE;
}

static int walk_entry(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct walk *w = arg;
	struct random_gen *g = w->g;
	struct sufs_stat st;
	size_t node = SIZE_MAX, i;
	uint32_t up;
	char *path;
	int err;

	(void)ftype;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (memchr(name, '\0', len)) {
		g->nodes[w->dir_node].foreign = 1;
		return 0;   /* cannot be named in a path: leave it alone */
	}
	if ((!w->dir[0] || !strcmp(w->dir, "/")) && len == 5 && !memcmp(name, ".snap", 5))
		return 0;   /* the snapshots: the library's own */
	err = sufs_stat(w->fs, ino, &st);
	if (err)
		return err;
	/* a directory's second name, which only a crash leaves (a rename
	 * of it cut short): the model keeps the one its ".." confirms, as
	 * fsck does, else the first */
	if (S_ISDIR(st.mode) &&
	    ((sufs_lookup(w->fs, ino, "..", 2, &up) == 0 && up != w->dir_ino) ||
	     bit_test_set(g, ino))) {
		g->nodes[w->dir_node].foreign = 1;
		return 0;
	}
	path = path_join(w->dir, name, len);
	if (!path)
		return -ENOMEM;
	if (!S_ISDIR(st.mode) && st.links > 1) {
		/* a hard link to a node seen before? */
		for (i = 0; i < g->nnodes; i++)
			if (g->nodes[i].ino == ino)
				node = i;
	}
	if (node == SIZE_MAX) {
		node = node_new(g, type_of(st.mode));
		if (node == SIZE_MAX) {
			free(path);
			return -ENOMEM;
		}
		g->nodes[node].ino = ino;
		g->nodes[node].size = S_ISREG(st.mode) ? st.size : 0;
		g->nodes[node].charged = st.blocks;
		xattrs_found(g, w->fs, &g->nodes[node]);
	}
	if (S_ISDIR(st.mode)) {
		if (w->nsub == w->subcap) {
			size_t cap = w->subcap ? 2 * w->subcap : 16;
			struct subdir *v = realloc(w->subdirs, cap * sizeof(*v));
			if (!v) {
				free(path);
				return -ENOMEM;
			}
			w->subdirs = v;
			w->subcap = cap;
		}
		w->subdirs[w->nsub].path = strdup(path);
		w->subdirs[w->nsub].ino = ino;
		w->subdirs[w->nsub].node = node;
		if (!w->subdirs[w->nsub].path) {
			free(path);
			return -ENOMEM;
		}
		w->nsub++;
	}
	name_add(g, path, node);
	return g->err;
}

/* Read the tree under dir (a path) into the model, depth first. */
static int walk_tree(struct random_gen *g, struct sufs_fs *fs, const char *dir, uint32_t ino,
		     size_t node)
{
	struct walk w = { g, fs, dir, ino, node, NULL, 0, 0 };
	size_t i;
	int err = sufs_readdir(fs, ino, walk_entry, &w);

	for (i = 0; i < w.nsub; i++) {
		if (!err)
			err = walk_tree(g, fs, w.subdirs[i].path, w.subdirs[i].ino,
					w.subdirs[i].node);
		free(w.subdirs[i].path);
	}
	free(w.subdirs);
	return err;
}

int random_open(struct sufs_fs *fs, uint64_t seed, struct random_gen **out)
{
	const struct sufs_super *sb = sufs_get_super(fs);
	struct random_gen *g = calloc(1, sizeof(*g));
	char *root = strdup("/");
	size_t node;
	int err;

	if (!g || !root) {
		free(g);
		free(root);
		return -ENOMEM;
	}
	g->state = seed;
	g->bsize = sb->block_size;
	g->xattr = (sb->features_ro_compat & SUFS_FEATURE_RO_XATTR) != 0;
	/* a margin for what the estimates miss: directories that grow, the
	 * summary counts being a little off after a crash */
	g->blocks_left = (int64_t)(sb->free_blocks * 7 / 10);
	g->inodes_left = (int64_t)sb->free_inodes * 9 / 10;
	node = node_new(g, N_DIR);
	name_add(g, root, node);
	err = g->err;
	g->inodes_count = sb->inodes_count;
	g->dirs_seen = calloc(sb->inodes_count / 8 + 1, 1);
	if (!err && !g->dirs_seen)
		err = -ENOMEM;
	if (!err && bit_test_set(g, sb->root_ino))
		err = -SUFS_ECORRUPT;
	if (!err)
		err = walk_tree(g, fs, "/", sb->root_ino, node);
	free(g->dirs_seen);
	g->dirs_seen = NULL;
	if (err) {
		random_close(g);
		return err;
	}
	*out = g;
	return 0;
}

void random_close(struct random_gen *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nnames; i++)
		free(g->names[i].path);
	free(g->names);
	free(g->nodes);
	free(g->pick);
	free(g->line);
	free(g);
}
