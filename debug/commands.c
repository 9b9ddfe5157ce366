/*
 * commands.c - the commands of sufs-debug that read an image, and the one
 * table that lists every command.
 *
 * Each command resolves its arguments, asks the library, and prints.  None
 * of these writes the image; the table's flags say which commands (the
 * operations of modify.c, the editing commands of edit.c) need it opened
 * with -w.  Output formats follow debugfs where one
 * exists (ls, stat, blocks, icheck, ncheck), so its users feel at home.
 */
#include "config.h"

#include "commands.h"
#include "script.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Messages and names                                                        */
/* ------------------------------------------------------------------------ */

/* The command word and the argument were typed, or read from the image:
 * they go out with print_name()'s escapes, never a control byte raw; an
 * empty argument as it is typed, ''. */
static int vfail(const char *cmd, const char *name, size_t len, const char *fmt, va_list ap)
{
	fflush(stdout);
	progress_break();
	fprintf(stderr, "%s: ", prog);
	print_name(stderr, cmd, strlen(cmd));
	if (name) {
		fputc(' ', stderr);
		if (len)
			print_name(stderr, name, len);
		else
			fputs("''", stderr);
	}
	fputs(": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	return 1;
}

int fail(const char *cmd, const char *arg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(cmd, arg, arg ? strlen(arg) : 0, fmt, ap);
	va_end(ap);
	return 1;
}

int fail_name(const char *cmd, const char *name, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(cmd, name, len, fmt, ap);
	va_end(ap);
	return 1;
}

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

/* Print "usage: ..." for the command named argv0 and return 1. */
static int usage(const char *argv0)
{
	const struct command *c = command_find(argv0);
	const char *args = c ? c->args : "";
	return fail(argv0, NULL, "usage: %s%s%s", c ? c->name : argv0, *args ? " " : "", args);
}

/*
 * Options before the operands: single letters from `allowed`, alone or
 * grouped ("-l"); "--" ends them.  Each letter seen sets its bit in *opts
 * (bit c - 'a').  Returns the index of the first operand, or -1 after
 * saying what was wrong.
 */
static int get_options(int argc, char **argv, const char *allowed, unsigned *opts)
{
	int i;

	*opts = 0;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *p;
		if (strcmp(argv[i], "--") == 0)
			return i + 1;
		for (p = argv[i] + 1; *p; p++) {
			if (*p < 'a' || *p > 'z' || !strchr(allowed, *p)) {
				fail(argv[0], NULL, "unknown option -%c", *p);
				usage(argv[0]);
				return -1;
			}
			*opts |= 1u << (*p - 'a');
		}
	}
	return i;
}
#define OPT(c) (1u << ((c) - 'a'))

/* ctime()-like local time, without the newline; "(invalid)" when out of range. */
static const char *fmt_time(int64_t sec, char *buf, size_t size)
{
	time_t t = (time_t)sec;
	struct tm tm;

	if ((int64_t)t != sec || !localtime_r(&t, &tm) ||
	    !strftime(buf, size, "%a %b %e %H:%M:%S %Y", &tm))
		snprintf(buf, size, "(invalid)");
	return buf;
}

/* ls -l's short form: 2023-11-14 22:13 */
static const char *fmt_time_short(int64_t sec, char *buf, size_t size)
{
	time_t t = (time_t)sec;
	struct tm tm;

	if ((int64_t)t != sec || !localtime_r(&t, &tm) ||
	    !strftime(buf, size, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, size, "(invalid time)");
	return buf;
}

/* "drwxr-xr-x", with s/S and t/T as ls(1) shows them. */
static void mode_string(uint32_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";
	char t;
	int i;

	switch (mode & S_IFMT) {
	case S_IFREG:  t = '-'; break;
	case S_IFDIR:  t = 'd'; break;
	case S_IFLNK:  t = 'l'; break;
	case S_IFCHR:  t = 'c'; break;
	case S_IFBLK:  t = 'b'; break;
	case S_IFIFO:  t = 'p'; break;
	case S_IFSOCK: t = 's'; break;
	default:       t = '?'; break;
	}
	out[0] = t;
	for (i = 0; i < 9; i++)
		out[i + 1] = mode & (0400u >> i) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = mode & S_IXUSR ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = mode & S_IXGRP ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = mode & S_IXOTH ? 't' : 'T';
	out[10] = '\0';
}

/*
 * sufs_namei(), except that a last component whose inode is damaged still
 * resolves when it is not to be followed: a debugger must be able to show
 * that inode.
 */
static int namei_nofail(struct sufs_fs *fs, uint32_t base, const char *path, int follow,
			uint32_t *ino)
{
	const char *name;
	uint32_t dir;
	size_t len;
	int rc = sufs_namei(fs, base, path, follow, ino);

	if (rc != -SUFS_ECHECKSUM || follow)
		return rc;
	if (sufs_namei_parent(fs, base, path, &dir, &name, &len) ||
	    sufs_lookup(fs, dir, name, len, ino))
		return rc;
	return 0;
}

int resolve(struct session *s, const char *cmd, const char *path, int follow, uint32_t *ino)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	const char *rest;
	uint32_t n;
	int rc;

	/* <INO> or <INO>/rest, when what is between the brackets is a number */
	if (script_inode_path(path, &n, &rest)) {
		if (n == 0 || n > sb->inodes_count)
			return fail(cmd, path, "no such inode (the image has 1 to %u)",
				    sb->inodes_count);
		if (!*rest) {
			*ino = n;
			return 0;
		}
		rc = namei_nofail(s->fs, n, rest, follow, ino);
		return rc ? fail(cmd, path, "%s", sufs_strerror(rc)) : 0;
	}
	rc = namei_nofail(s->fs, s->cwd, path, follow, ino);
	return rc ? fail(cmd, path, "%s", sufs_strerror(rc)) : 0;
}

/* ------------------------------------------------------------------------ */
/* Directory listings                                                        */
/* ------------------------------------------------------------------------ */

struct entry_list {
	struct entry *v;
	size_t n, cap;
};

static int collect_entry(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct entry_list *l = arg;
	struct entry *e;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		struct entry *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	e = &l->v[l->n];
	e->name = malloc(len + 1);
	if (!e->name)
		return -ENOMEM;
	memcpy(e->name, name, len);
	e->name[len] = '\0';
	e->len = len;
	e->ino = ino;
	e->ftype = ftype;
	l->n++;
	return 0;
}

int read_entries(struct session *s, uint32_t dir, struct entry **out, size_t *n)
{
	struct entry_list l = { NULL, 0, 0 };
	int rc = sufs_readdir(s->fs, dir, collect_entry, &l);

	if (rc) {
		free_entries(l.v, l.n);
		return rc;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

void free_entries(struct entry *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

int is_dot_name(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

int name_in_parent(struct session *s, uint32_t dir, uint32_t *parent, char **name, size_t *len)
{
	struct entry *v;
	size_t n, i;
	int rc = sufs_lookup(s->fs, dir, "..", 2, parent);

	if (rc)
		return rc;
	rc = read_entries(s, *parent, &v, &n);
	if (rc)
		return rc;
	rc = -ENOENT;
	for (i = 0; i < n; i++) {
		if (v[i].ino == dir && !is_dot_name(v[i].name, v[i].len)) {
			*name = v[i].name;
			*len = v[i].len;
			v[i].name = NULL;
			rc = 0;
			break;
		}
	}
	free_entries(v, n);
	return rc;
}

/*
 * The path of a directory, found by climbing "..".  A directory that its
 * parent does not list (an orphan, a damaged tree) ends the climb: the path
 * then starts with "<INO>", which resolve() understands.
 */
char *dir_path(struct session *s, uint32_t dir)
{
	uint32_t root = sufs_get_super(s->fs)->root_ino;
	char *path = strdup(""), *name, *longer;
	size_t len, steps;
	uint32_t parent;

	for (steps = 0; path && dir != root; steps++) {
		if (steps > 4096 || name_in_parent(s, dir, &parent, &name, &len)) {
			len = strlen(path) + 16;
			longer = malloc(len);
			if (longer)
				snprintf(longer, len, "<%u>%s", dir, path);
			free(path);
			return longer;
		}
		longer = malloc(1 + len + strlen(path) + 1);
		if (longer) {
			longer[0] = '/';
			memcpy(longer + 1, name, len);
			strcpy(longer + 1 + len, path);
		}
		free(name);
		free(path);
		path = longer;
		dir = parent;
	}
	if (path && !*path) {
		free(path);
		path = strdup("/");
	}
	return path;
}

/* ------------------------------------------------------------------------ */
/* help, quit                                                                */
/* ------------------------------------------------------------------------ */

static int cmd_help(struct session *s, int argc, char **argv)
{
	const struct command *c;
	int i, rc = 0;

	if (argc == 1) {
		puts("Commands (a PATH may also be <INO>, an inode number):");
		for (c = commands; c->name; c++) {
			char head[64];
			snprintf(head, sizeof(head), "%s %s", c->name, c->args);
			if (strlen(head) > 24)  /* a long usage gets a line of its own */
				printf("  %s\n%27s", head, "");
			else
				printf("  %-24s ", head);
			printf("%s%s\n", c->help, c->flags & CMD_NEEDS_WRITE ? " (needs -w)" : "");
		}
		return 0;
	}
	for (i = 1; i < argc; i++) {
		c = command_find(argv[i]);
		if (!c) {
			rc = fail(argv[0], argv[i], "no such command");
			continue;
		}
		printf("%s%s%s\n    %s\n", c->name, *c->args ? " " : "", c->args, c->help);
		if (c->aliases[0]) {
			const char *const *a;
			fputs("    also called:", stdout);
			for (a = c->aliases; *a; a++)
				printf(" %s", *a);
			putchar('\n');
		}
		if (c->flags & CMD_NEEDS_WRITE)
			puts("    needs the image opened with -w");
	}
	return rc;
}

static int cmd_quit(struct session *s, int argc, char **argv)
{
	if (argc != 1)
		return usage(argv[0]);
	s->quit = 1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* ls, cd, pwd                                                               */
/* ------------------------------------------------------------------------ */

/* ls's messages about one entry name it escaped, as the listing does. */
static int ls_fail(const char *name, size_t len, uint32_t ino, const char *what, int err)
{
	return fail_name("ls", name, len, "inode %u: %s%s", ino, what, sufs_strerror(err));
}

/*
 * One `ls -l` line; returns 0, or 1 after a message when the inode cannot
 * be read (its line then shows only the inode number and the name).
 */
static int ls_long(struct session *s, const char *name, size_t len, uint32_t ino)
{
	struct sufs_stat st;
	char mode[11], when[32], size[32];
	int rc = sufs_stat(s->fs, ino, &st);

	if (rc) {
		printf("%7u %-10s %5s %5s %5s %10s %-16s ", ino, "?", "?", "?", "?", "?", "?");
		print_name(stdout, name, len);
		putchar('\n');
		return ls_fail(name, len, ino, "", rc);
	}
	mode_string(st.mode, mode);
	if (S_ISCHR(st.mode) || S_ISBLK(st.mode))
		snprintf(size, sizeof(size), "%u, %u", st.rdev_major, st.rdev_minor);
	else
		snprintf(size, sizeof(size), "%llu", (unsigned long long)st.size);
	printf("%7u %s %5u %5u %5u %10s %s ", ino, mode, st.links, st.uid, st.gid, size,
	       fmt_time_short(st.mtime, when, sizeof(when)));
	print_name(stdout, name, len);
	if (S_ISLNK(st.mode)) {
		char target[4096];
		size_t tlen;
		rc = sufs_readlink(s->fs, ino, target, sizeof(target), &tlen);
		fputs(" -> ", stdout);
		if (rc)
			fputs("?", stdout);
		else
			print_name(stdout, target, tlen);
	}
	putchar('\n');
	return rc ? ls_fail(name, len, ino, "reading the link: ", rc) : 0;
}

static int cmd_ls(struct session *s, int argc, char **argv)
{
	const char *path;
	struct sufs_stat st;
	struct entry *v;
	size_t n, i;
	unsigned opts;
	uint32_t ino;
	int first = get_options(argc, argv, "l", &opts), rc;

	if (first < 0)
		return 1;
	if (argc - first > 1)
		return usage(argv[0]);
	path = first < argc ? argv[first] : ".";
	if (resolve(s, argv[0], path, 1, &ino))
		return 1;
	rc = sufs_stat(s->fs, ino, &st);
	if (rc)
		return fail(argv[0], path, "%s", sufs_strerror(rc));
	if (!S_ISDIR(st.mode)) {
		if (opts & OPT('l'))
			return ls_long(s, path, strlen(path), ino);
		print_name(stdout, path, strlen(path));
		putchar('\n');
		return 0;
	}
	rc = read_entries(s, ino, &v, &n);
	if (rc)
		return fail(argv[0], path, "%s", sufs_strerror(rc));
	rc = 0;
	for (i = 0; i < n; i++) {
		if (opts & OPT('l')) {
			rc |= ls_long(s, v[i].name, v[i].len, v[i].ino);
		} else {
			print_name(stdout, v[i].name, v[i].len);
			putchar('\n');
		}
	}
	free_entries(v, n);
	return rc;
}

static int cmd_cd(struct session *s, int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/";
	struct sufs_stat st;
	uint32_t ino;
	int rc;

	if (argc > 2)
		return usage(argv[0]);
	if (resolve(s, argv[0], path, 1, &ino))
		return 1;
	rc = sufs_stat(s->fs, ino, &st);
	if (rc)
		return fail(argv[0], path, "%s", sufs_strerror(rc));
	if (!S_ISDIR(st.mode))
		return fail(argv[0], path, "%s", sufs_strerror(-ENOTDIR));
	s->cwd = ino;
	return 0;
}

static int cmd_pwd(struct session *s, int argc, char **argv)
{
	char *path;

	if (argc != 1)
		return usage(argv[0]);
	path = dir_path(s, s->cwd);
	if (!path)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	print_name(stdout, path, strlen(path));
	putchar('\n');
	free(path);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The blocks of an inode: stat, blocks, bmap                                */
/* ------------------------------------------------------------------------ */

struct mapped {
	uint64_t lblk, pblk;
	int level, bad;
};

struct block_list {
	struct mapped *v;
	size_t n, cap;
};

static int collect_block(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
			 int level, int bad, void *arg)
{
	struct block_list *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct mapped *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct mapped){ lblk, pblk, level, bad };
	return 0;
}

/* debugfs's block list: (0-11):1000-1011, (IND):1012, (12-20):1013-1021 */
static void print_block_list(const struct block_list *l)
{
	static const char *const ind[] = { "", "IND", "DIND", "TIND" };
	size_t i = 0, j;
	int col = 0;

	while (i < l->n) {
		const struct mapped *m = &l->v[i];
		char item[96];

		if (m->level > 0) {
			snprintf(item, sizeof(item), "(%s):%llu%s", ind[m->level & 3],
				 (unsigned long long)m->pblk, m->bad ? "[bad]" : "");
			i++;
		} else {
			for (j = i + 1; j < l->n && l->v[j].level == 0 && !l->v[j].bad && !m->bad &&
			     l->v[j].lblk == m->lblk + (j - i) && l->v[j].pblk == m->pblk + (j - i);
			     j++)
				;
			if (j - i == 1)
				snprintf(item, sizeof(item), "(%llu):%llu%s",
					 (unsigned long long)m->lblk, (unsigned long long)m->pblk,
					 m->bad ? "[bad]" : "");
			else
				snprintf(item, sizeof(item), "(%llu-%llu):%llu-%llu",
					 (unsigned long long)m->lblk,
					 (unsigned long long)l->v[j - 1].lblk,
					 (unsigned long long)m->pblk,
					 (unsigned long long)l->v[j - 1].pblk);
			i = j;
		}
		if (col && col + strlen(item) + 2 > 78) {
			fputs(",\n", stdout);
			col = 0;
		} else if (col) {
			fputs(", ", stdout);
			col += 2;
		}
		fputs(item, stdout);
		col += (int)strlen(item);
	}
	if (col)
		putchar('\n');
}

static void print_stat_time(const char *label, int64_t sec, uint32_t ns)
{
	char buf[64], num[32];
	printf("%6s: %s -- %s\n", label, seconds_str(sec, ns, num, sizeof(num)),
	       fmt_time(sec, buf, sizeof(buf)));
}

/* stat's "Extended attributes:", as debugfs shows them, when there are any. */
static int stat_xattrs(struct session *s, char **argv, uint32_t ino)
{
	size_t len = 0;
	int rc = sufs_listxattr(s->fs, ino, NULL, 0, &len, NULL);

	if (!rc && len) {
		puts("Extended attributes:");
		rc = print_xattrs(s, ino, "  ", 0);
	}
	return rc ? fail(argv[0], argv[1], "reading its attributes: %s", sufs_strerror(rc)) : 0;
}

static int cmd_stat(struct session *s, int argc, char **argv)
{
	struct sufs_inode in;
	struct block_list bl = { NULL, 0, 0 };
	uint32_t ino;
	int rc, bad_csum = 0, status = 0;

	if (argc != 2)
		return usage(argv[0]);
	if (resolve(s, argv[0], argv[1], 0, &ino))
		return 1;
	rc = sufs_inode_get(s->fs, ino, &in);
	if (rc == -SUFS_ECHECKSUM)
		bad_csum = 1;
	else if (rc)
		return fail(argv[0], argv[1], "%s", sufs_strerror(rc));

	printf("Inode: %u   Type: %s    Mode:  %04o   Flags: 0x%x\n", ino, type_name(in.mode),
	       in.mode & 07777u, in.flags);
	printf("Generation: %u\n", in.generation);
	printf("User: %5u   Group: %5u   Size: %llu\n", in.uid, in.gid,
	       (unsigned long long)in.size);
	printf("Links: %u   Blockcount: %llu\n", in.links, (unsigned long long)in.blocks);
	printf("File ACL: %llu\n", (unsigned long long)in.xattr_block);
	print_stat_time("ctime", in.ctime, in.ctime_ns);
	print_stat_time("atime", in.atime, in.atime_ns);
	print_stat_time("mtime", in.mtime, in.mtime_ns);
	print_stat_time("crtime", in.crtime, in.crtime_ns);
	printf("Inode checksum: 0x%08x%s\n", in.checksum, bad_csum ? " (does not match)" : "");
	if (bad_csum)
		fail(argv[0], argv[1], "warning: the inode's checksum does not match its contents");
	else
		status = stat_xattrs(s, argv, ino);

	if (S_ISCHR(in.mode) || S_ISBLK(in.mode)) {
		printf("Device major/minor number: %u, %u\n", in.rdev_major, in.rdev_minor);
	} else if (S_ISLNK(in.mode) && in.size <= SUFS_FAST_SYMLINK_MAX) {
		char target[SUFS_FAST_SYMLINK_MAX + 1];
		size_t len;
		rc = sufs_readlink(s->fs, ino, target, sizeof(target), &len);
		if (rc) {
			status = fail(argv[0], argv[1], "reading the link: %s", sufs_strerror(rc));
		} else {
			fputs("Fast link dest: \"", stdout);
			print_name(stdout, target, len);
			fputs("\"\n", stdout);
		}
	} else if (S_ISREG(in.mode) || S_ISDIR(in.mode) || S_ISLNK(in.mode)) {
		if (bad_csum) {
			/* the library will not walk a damaged inode: show its pointers */
			unsigned i;
			fputs("Block pointers (not followed):", stdout);
			for (i = 0; i < SUFS_NBLOCKS; i++)
				printf(" %llu", (unsigned long long)in.block[i]);
			putchar('\n');
			return status;
		}
		rc = sufs_block_iterate(s->fs, ino, collect_block, &bl);
		puts("BLOCKS:");
		print_block_list(&bl);
		printf("TOTAL: %zu\n", bl.n);
		if (rc)
			status = fail(argv[0], argv[1], "walking the block map: %s", sufs_strerror(rc));
		free(bl.v);
	}
	return status;
}

static int cmd_blocks(struct session *s, int argc, char **argv)
{
	struct block_list bl = { NULL, 0, 0 };
	uint64_t bad_lblk = 0;
	uint32_t ino;
	size_t i;
	int rc, any = 0, bad = 0;

	if (argc != 2)
		return usage(argv[0]);
	if (resolve(s, argv[0], argv[1], 0, &ino))
		return 1;
	rc = sufs_block_iterate(s->fs, ino, collect_block, &bl);
	for (i = 0; i < bl.n; i++) {
		if (bl.v[i].bad && !bad++)
			bad_lblk = bl.v[i].lblk;
		if (bl.v[i].level != 0 || bl.v[i].bad)
			continue;
		printf("%s%llu", any ? " " : "", (unsigned long long)bl.v[i].pblk);
		any = 1;
	}
	if (any)
		putchar('\n');
	free(bl.v);
	if (rc)
		return fail(argv[0], argv[1], "%s", sufs_strerror(rc));
	if (bad)
		return fail(argv[0], argv[1], "a block pointer out of range at logical block %llu",
			    (unsigned long long)bad_lblk);
	return 0;
}

static int cmd_bmap(struct session *s, int argc, char **argv)
{
	uint64_t lblk, pblk;
	uint32_t ino;
	int rc;

	if (argc != 3)
		return usage(argv[0]);
	if (parse_u64(argv[2], &lblk))
		return fail(argv[0], argv[2], "not a block number");
	if (resolve(s, argv[0], argv[1], 0, &ino))
		return 1;
	rc = sufs_bmap(s->fs, ino, lblk, &pblk);
	if (rc)
		return fail(argv[0], argv[1], "block %llu: %s", (unsigned long long)lblk,
			    sufs_strerror(rc));
	printf("%llu\n", (unsigned long long)pblk);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* cat, dump                                                                 */
/* ------------------------------------------------------------------------ */

static int cmd_cat(struct session *s, int argc, char **argv)
{
	static char buf[65536];
	struct sufs_stat st;
	uint64_t off;
	uint32_t ino;
	size_t done;
	int rc;

	if (argc != 2)
		return usage(argv[0]);
	if (resolve(s, argv[0], argv[1], 1, &ino))
		return 1;
	rc = sufs_stat(s->fs, ino, &st);
	if (rc)
		return fail(argv[0], argv[1], "%s", sufs_strerror(rc));
	switch (st.mode & S_IFMT) {
	case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFCHR: case S_IFBLK:
	case S_IFIFO: case S_IFSOCK:
		break;
	default:
		return fail(argv[0], argv[1], "no valid file type (mode 0%o): nothing to read",
			    (unsigned)st.mode);
	}
	if (S_ISLNK(st.mode)) {
		/* only reached as <INO>: print what the link holds */
		rc = sufs_readlink(s->fs, ino, buf, sizeof(buf), &done);
		if (rc)
			return fail(argv[0], argv[1], "%s", sufs_strerror(rc));
		fwrite(buf, 1, done, stdout);
		return 0;
	}
	for (off = 0; off < st.size; off += done) {
		size_t want = st.size - off < sizeof(buf) ? (size_t)(st.size - off) : sizeof(buf);
		if (debug_interrupted())
			return fail(argv[0], argv[1], "interrupted at byte %llu",
				    (unsigned long long)off);
		rc = sufs_read(s->fs, ino, off, buf, want, &done);
		if (rc)
			return fail(argv[0], argv[1], "at byte %llu: %s", (unsigned long long)off,
				    sufs_strerror(rc));
		if (done == 0)
			break;
		if (fwrite(buf, 1, done, stdout) != done)
			return fail(argv[0], argv[1], "writing the output: %s", strerror(errno));
	}
	return 0;
}

static int cmd_dump(struct session *s, int argc, char **argv)
{
	struct sufs_stat st;
	unsigned opts;
	uint32_t ino;
	int first = get_options(argc, argv, "p", &opts), fd, rc;
	const char *path, *host;

	if (first < 0)
		return 1;
	if (argc - first != 2)
		return usage(argv[0]);
	path = argv[first];
	host = argv[first + 1];
	if (resolve(s, argv[0], path, 1, &ino))
		return 1;
	rc = sufs_stat(s->fs, ino, &st);
	if (rc)
		return fail(argv[0], path, "%s", sufs_strerror(rc));
	if (!S_ISREG(st.mode) && !S_ISDIR(st.mode) && !S_ISLNK(st.mode))
		return fail(argv[0], path, "a %s has no contents to dump", type_name(st.mode));
	fd = open(host, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return fail(argv[0], host, "%s", strerror(errno));
	if (S_ISLNK(st.mode)) {
		char target[65536];
		size_t len;
		rc = sufs_readlink(s->fs, ino, target, sizeof(target), &len);
		if (rc)
			rc = fail(argv[0], path, "%s", sufs_strerror(rc));
		else if (write(fd, target, len) != (ssize_t)len)
			rc = fail(argv[0], host, "%s", strerror(errno));
	} else {
		rc = copy_contents(s, argv[0], path, ino, st.size, fd);
	}
	if (!rc && (opts & OPT('p')))
		rc = copy_attributes(argv[0], host, &st, fd);
	if (close(fd) && !rc)
		rc = fail(argv[0], host, "%s", strerror(errno));
	return rc;
}

/* ------------------------------------------------------------------------ */
/* icheck: which inode owns a block                                          */
/* ------------------------------------------------------------------------ */

struct wanted_block {
	uint64_t blk;
	uint32_t owner;            /* 0: none found yet */
	const char *meta;          /* file-system metadata: what it is */
	uint32_t meta_group;
};

struct icheck {
	struct wanted_block *v;
	size_t n, left;            /* left: still without an owner */
	uint32_t ino;
};

static int icheck_block(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
			int level, int bad, void *arg)
{
	struct icheck *ic = arg;
	size_t i;

	for (i = 0; i < ic->n; i++) {
		if (ic->v[i].blk == pblk && !ic->v[i].owner && !ic->v[i].meta) {
			ic->v[i].owner = ino;
			if (--ic->left == 0)
				return 1;  /* all found: stop this walk */
		}
	}
	return 0;
}

/* Name the block if it belongs to the file system's own metadata. */
static void icheck_meta(const struct sufs_super *sb, struct wanted_block *w)
{
	struct sufs_group_layout l;
	uint32_t g;

	for (g = 0; g < sb->groups_count; g++) {
		sufs_group_layout(sb, g, &l);
		if (w->blk < l.start || w->blk >= l.end)
			continue;
		w->meta_group = g;
		if (w->blk == l.sb_block)
			w->meta = g ? "superblock backup" : "superblock";
		else if (l.gdt_blocks && w->blk >= l.gdt_start && w->blk < l.gdt_start + l.gdt_blocks)
			w->meta = "group descriptors";
		else if (w->blk == l.block_bitmap)
			w->meta = "block bitmap";
		else if (w->blk == l.inode_bitmap)
			w->meta = "inode bitmap";
		else if (w->blk >= l.inode_table && w->blk < l.inode_table + l.inode_table_blocks)
			w->meta = "inode table";
		else if (w->blk < l.first_data)
			w->meta = "reserved";
		return;
	}
}

static int cmd_icheck(struct session *s, int argc, char **argv)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	struct icheck ic = { NULL, 0, 0, 0 };
	struct sufs_inode in;
	uint32_t ino;
	int i, rc = 0, set;

	if (argc < 2)
		return usage(argv[0]);
	ic.v = calloc((size_t)argc, sizeof(*ic.v));
	if (!ic.v)
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	for (i = 1; i < argc; i++) {
		struct wanted_block *w = &ic.v[ic.n];
		if (parse_u64(argv[i], &w->blk) || w->blk >= sb->blocks_count) {
			rc = fail(argv[0], argv[i], "not a block number (the image has 0 to %llu)",
				  (unsigned long long)sb->blocks_count - 1);
			continue;
		}
		icheck_meta(sb, w);
		if (!w->meta)
			ic.left++;
		ic.n++;
	}
	for (ino = 1; ino <= sb->inodes_count && ic.left; ino++) {
		/* catastrophic mode reads no bitmap: every inode is looked at */
		int err = s->catastrophic ? (set = 1, 0)
					  : sufs_bitmap_test(s->fs, SUFS_BITMAP_INODE, ino, &set);
		if (err) {
			rc = fail(argv[0], NULL, "inode bitmap at inode %u: %s", ino, sufs_strerror(err));
			break;
		}
		if (!set)
			continue;
		err = sufs_inode_get(s->fs, ino, &in);
		if (err == -SUFS_ECHECKSUM) {
			fail(argv[0], NULL, "warning: inode %u: %s (skipped)", ino, sufs_strerror(err));
			continue;
		}
		if (!err && s->catastrophic && (!in.mode || !in.links))
			continue;  /* free, as far as the inode itself says */
		/* its attribute block is its own, as its data blocks are */
		if (!err && in.xattr_block)
			icheck_block(s->fs, ino, 0, in.xattr_block, 0, 0, &ic);
		if (!err && ic.left)
			err = sufs_block_iterate(s->fs, ino, icheck_block, &ic);
		if (err < 0)
			rc = fail(argv[0], NULL, "inode %u: %s", ino, sufs_strerror(err));
	}
	puts("Block\tInode number");
	for (size_t k = 0; k < ic.n; k++) {
		const struct wanted_block *w = &ic.v[k];
		if (w->meta)
			printf("%llu\t<%s of group %u>\n", (unsigned long long)w->blk, w->meta,
			       w->meta_group);
		else if (w->owner)
			printf("%llu\t%u\n", (unsigned long long)w->blk, w->owner);
		else
			printf("%llu\t<block not found>\n", (unsigned long long)w->blk);
	}
	free(ic.v);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* ncheck: the names of an inode                                             */
/* ------------------------------------------------------------------------ */

struct ncheck {
	struct session *s;
	uint32_t *want;
	uint8_t *found;
	size_t n;
	uint8_t *seen_dirs;        /* one bit per inode: directories already walked */
	char *path;                /* the current directory's path, grown as needed */
	size_t len, cap;
	int rc;
};

static int path_push(char **path, size_t *plen, size_t *cap, const char *name, size_t len)
{
	if (*plen + 1 + len + 1 > *cap) {
		size_t ncap = (*plen + 1 + len + 1) * 2;
		char *p = realloc(*path, ncap);
		if (!p)
			return -ENOMEM;
		*path = p;
		*cap = ncap;
	}
	(*path)[(*plen)++] = '/';
	memcpy(*path + *plen, name, len);
	*plen += len;
	(*path)[*plen] = '\0';
	return 0;
}

int bit_test_and_set(uint8_t *bits, uint32_t n)
{
	int was = bits[n / 8] >> (n % 8) & 1;
	bits[n / 8] |= (uint8_t)(1u << (n % 8));
	return was;
}

static void ncheck_dir(struct ncheck *nc, uint32_t dir)
{
	struct entry *v;
	size_t n, i, k, keep = nc->len;
	int err = read_entries(nc->s, dir, &v, &n);

	if (err) {
		nc->rc = fail("ncheck", nc->len ? nc->path : "/", "%s", sufs_strerror(err));
		return;
	}
	for (i = 0; i < n; i++) {
		const struct entry *e = &v[i];
		if (is_dot_name(e->name, e->len))
			continue;
		if (path_push(&nc->path, &nc->len, &nc->cap, e->name, e->len)) {
			nc->rc = fail("ncheck", NULL, "%s", sufs_strerror(-ENOMEM));
			break;
		}
		for (k = 0; k < nc->n; k++) {
			if (nc->want[k] == e->ino) {
				nc->found[k] = 1;
				printf("%u\t", e->ino);
				print_name(stdout, nc->path, nc->len);
				putchar('\n');
			}
		}
		if (e->ftype == SUFS_FT_DIR && e->ino <= sufs_get_super(nc->s->fs)->inodes_count &&
		    !bit_test_and_set(nc->seen_dirs, e->ino))
			ncheck_dir(nc, e->ino);
		nc->len = keep;
		if (nc->path)
			nc->path[keep] = '\0';
	}
	free_entries(v, n);
}

static int cmd_ncheck(struct session *s, int argc, char **argv)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	struct ncheck nc = { s, NULL, NULL, 0, NULL, NULL, 0, 0, 0 };
	size_t k;
	int i;

	if (argc < 2)
		return usage(argv[0]);
	nc.want = calloc((size_t)argc, sizeof(*nc.want));
	nc.found = calloc((size_t)argc, 1);
	nc.seen_dirs = calloc((size_t)sb->inodes_count / 8 + 1, 1);
	if (!nc.want || !nc.found || !nc.seen_dirs) {
		nc.rc = fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
		goto out;
	}
	for (i = 1; i < argc; i++) {
		uint32_t ino;
		if (parse_u32(argv[i], &ino) || ino == 0 || ino > sb->inodes_count) {
			nc.rc = fail(argv[0], argv[i], "not an inode number (the image has 1 to %u)",
				     sb->inodes_count);
			continue;
		}
		nc.want[nc.n++] = ino;
	}
	puts("Inode\tPathname");
	for (k = 0; k < nc.n; k++) {
		if (nc.want[k] == sb->root_ino) {
			printf("%u\t/\n", sb->root_ino);
			nc.found[k] = 1;
		}
	}
	bit_test_and_set(nc.seen_dirs, sb->root_ino);
	ncheck_dir(&nc, sb->root_ino);
	for (k = 0; k < nc.n; k++)
		if (!nc.found[k])
			printf("%u\t<name not found>\n", nc.want[k]);
out:
	free(nc.want);
	free(nc.found);
	free(nc.seen_dirs);
	free(nc.path);
	return nc.rc;
}

/* ------------------------------------------------------------------------ */
/* super, groups                                                             */
/* ------------------------------------------------------------------------ */

static void print_sb_time(const char *label, int64_t t)
{
	char buf[64];
	printf("%-26s%lld (%s)\n", label, (long long)t, t ? fmt_time(t, buf, sizeof(buf)) : "never");
}

static int cmd_super(struct session *s, int argc, char **argv)
{
	struct sufs_super view;
	const struct sufs_super *sb = edit_super_view(s, &view);
	const uint8_t *u = sb->uuid;
	unsigned i;

	if (argc != 1)
		return usage(argv[0]);
	printf("%-26s0x%08x\n", "Magic number:", sb->magic);
	printf("%-26s%u\n", "Version:", sb->version);
	printf("%-26s%u\n", "Block size:", sb->block_size);
	printf("%-26s%u\n", "Inode size:", sb->inode_size);
	printf("%-26s%llu\n", "Block count:", (unsigned long long)sb->blocks_count);
	printf("%-26s%llu\n", "Free blocks:", (unsigned long long)sb->free_blocks);
	printf("%-26s%u\n", "Inode count:", sb->inodes_count);
	printf("%-26s%u\n", "Free inodes:", sb->free_inodes);
	printf("%-26s%u\n", "Blocks per group:", sb->blocks_per_group);
	printf("%-26s%u\n", "Inodes per group:", sb->inodes_per_group);
	printf("%-26s%u\n", "Group count:", sb->groups_count);
	printf("%-26s%u\n", "Group descriptor blocks:", sb->gdt_blocks);
	printf("%-26s%u\n", "Root inode:", sb->root_ino);
	printf("%-26s%u\n", "First inode:", sb->first_ino);
	printf("%-26s%u (%s)\n", "State:", sb->state,
	       sb->state & SUFS_STATE_CLEAN ? "clean" : "not clean");
	printf("%-26s0x%x%s%s\n", "Flags:", sb->flags,
	       sb->flags & SUFS_FLAG_NEEDS_FSCK ? " needs_fsck" : "",
	       sb->flags & SUFS_FLAG_INCOMPLETE ? " incomplete" : "");
	printf("%-26s%u (%s)\n", "Write mode:", sb->write_mode, sufs_mode_name(sb->write_mode));
	printf("%-26s%u (%s)\n", "Default write mode:", sb->default_mode,
	       sufs_mode_name(sb->default_mode));
	printf("%-26s%u\n", "Mount count:", sb->mount_count);
	print_sb_time("Created:", sb->mkfs_time);
	print_sb_time("Last opened for writing:", sb->mount_time);
	print_sb_time("Last written:", sb->write_time);
	print_sb_time("Last checked:", sb->check_time);
	printf("%-26s%u\n", "Last check result:", sb->check_result);
	printf("%-26s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
	       "UUID:", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
	       u[11], u[12], u[13], u[14], u[15]);
	printf("%-26s\"", "Label:");
	print_name(stdout, sb->label, strnlen(sb->label, sizeof(sb->label)));
	puts("\"");
	printf("%-26s%u\n", "Superblock group:", sb->sb_group);
	printf("%-26s0x%x\n", "Compatible features:", sb->features_compat);
	printf("%-26s0x%x\n", "Incompatible features:", sb->features_incompat);
	printf("%-26s0x%x%s\n", "Read-only features:", sb->features_ro_compat,
	       sb->features_ro_compat & SUFS_FEATURE_RO_XATTR ? " xattr" : "");
	for (i = 0; i < SUFS_SNAP_SLOTS; i++) {
		const struct sufs_snap_slot *sl = &sb->snap[i];
		char label[32], when[64];
		if (!sl->ino)
			continue;
		snprintf(label, sizeof(label), "Snapshot %u:", i);
		printf("%-26sinode %u, flags 0x%x, taken %lld (%s)\n", label, sl->ino, sl->flags,
		       (long long)sl->time, fmt_time(sl->time, when, sizeof(when)));
	}
	printf("%-26s0x%08x\n", "Checksum:", sb->checksum);
	return 0;
}

static int cmd_groups(struct session *s, int argc, char **argv)
{
	const struct sufs_super *sb = sufs_get_super(s->fs);
	struct sufs_group_layout l;
	struct sufs_group gd;
	uint32_t g;
	int rc = 0, err;

	if (argc != 1)
		return usage(argv[0]);
	puts("group      start        end  bbitmap  ibitmap     itable  free_blocks  free_inodes"
	     "   dirs  flags  csum");
	for (g = 0; g < sb->groups_count; g++) {
		sufs_group_layout(sb, g, &l);
		err = edit_group_view(s, g, &gd);
		if (err) {
			rc = fail(argv[0], NULL, "group %u: %s", g, sufs_strerror(err));
			continue;
		}
		printf("%5u %10llu %10llu %8llu %8llu %10llu %12u %12u %6u %6x  %s\n", g,
		       (unsigned long long)l.start, (unsigned long long)l.end - 1,
		       (unsigned long long)gd.block_bitmap, (unsigned long long)gd.inode_bitmap,
		       (unsigned long long)gd.inode_table, gd.free_blocks, gd.free_inodes,
		       gd.used_dirs, gd.flags, sufs_group_csum_bad(s->fs, g) ? "BAD" : "ok");
	}
	return rc;
}

/* ------------------------------------------------------------------------ */
/* The table                                                                 */
/* ------------------------------------------------------------------------ */

const struct command commands[] = {
	{ "help", { "?", NULL }, "[COMMAND...]",
	  "list the commands, or describe some", cmd_help, 0 },
	{ "quit", { "q", "exit", NULL }, "",
	  "leave (stop reading commands)", cmd_quit, 0 },
	{ "ls", { "list_directory", NULL }, "[-l] [PATH]",
	  "list a directory in on-disk order (-l: the long form)",
	  cmd_ls, 0 },
	{ "cd", { "chdir", NULL }, "[PATH]",
	  "change the current directory (default /)", cmd_cd, 0 },
	{ "pwd", { NULL }, "",
	  "print the current directory", cmd_pwd, 0 },
	{ "stat", { "show_inode_info", NULL }, "PATH",
	  "show every field of an inode, and its block map", cmd_stat, 0 },
	{ "cat", { NULL }, "PATH",
	  "write a file's contents to standard output", cmd_cat, 0 },
	{ "dump", { "dump_inode", NULL }, "[-p] PATH HOSTFILE",
	  "copy a file to a host file (-p: its owner, mode, times too)",
	  cmd_dump, 0 },
	{ "rdump", { NULL }, "PATH... HOSTDIR",
	  "copy files and trees into a host directory, metadata kept",
	  cmd_rdump, 0 },
	{ "blocks", { NULL }, "PATH",
	  "list the data blocks of an inode in logical order", cmd_blocks, 0 },
	{ "bmap", { NULL }, "PATH LBLK",
	  "print the physical block of logical block LBLK (0: a hole)", cmd_bmap, 0 },
	{ "icheck", { NULL }, "BLOCK...",
	  "name the inode or metadata that owns each block", cmd_icheck, 0 },
	{ "ncheck", { NULL }, "INODE...",
	  "list every path of each inode", cmd_ncheck, 0 },
	{ "super", { "show_super_stats", NULL }, "",
	  "print the superblock", cmd_super, 0 },
	{ "groups", { NULL }, "",
	  "one line per group: layout, free counts, checksum", cmd_groups, 0 },
	{ "block_dump", { "bd", NULL }, "[-d] BLOCK | [-d] -f PATH LBLK",
	  "hex and ASCII of a block as in memory (-d: as on disk)", cmd_block_dump, 0 },
	{ "inode_dump", { "id", NULL }, "[-b] PATH",
	  "hex and ASCII of an inode as in memory (-b: its block pointers)", cmd_inode_dump, 0 },
	{ "imap", { NULL }, "PATH",
	  "where an inode lies: its group, block and offset", cmd_imap, 0 },
	{ "dirsearch", { NULL }, "DIR NAME",
	  "where NAME's entry lies in directory DIR: block and offset", cmd_dirsearch, 0 },
	{ "filefrag", { NULL }, "[-v] PATH",
	  "how many runs of contiguous blocks hold a file (-v: each run)", cmd_filefrag, 0 },
	{ "testb", { NULL }, "BLOCK [COUNT]",
	  "whether blocks are marked in use in the bitmap", cmd_testb, CMD_NEEDS_BITMAPS },
	{ "testi", { NULL }, "PATH",
	  "whether an inode is marked in use in the bitmap", cmd_testi, CMD_NEEDS_BITMAPS },
	{ "ffb", { "find_free_block", NULL }, "[COUNT [GOAL]]",
	  "find free blocks, from GOAL on", cmd_ffb, CMD_NEEDS_BITMAPS },
	{ "ffi", { "find_free_inode", NULL }, "[COUNT [GOAL]]",
	  "find free inodes, from GOAL on", cmd_ffi, CMD_NEEDS_BITMAPS },
	/* extended attributes (xattr.c) */
	{ "ea_list", { NULL }, "[-x] PATH",
	  "list an inode's extended attributes and their values (-x: in hex)", cmd_ea_list, 0 },
	{ "ea_get", { NULL }, "[-x] [-s SIZE] [-f HOSTFILE] PATH NAME",
	  "print an attribute's value (-x: in hex; -f: into a host file)", cmd_ea_get, 0 },
	{ "ea_set", { NULL }, "[-c | -r] [-f HOSTFILE] PATH NAME [VALUE]",
	  "set an attribute (-c: a new one only, -r: an existing one only)", cmd_ea_set,
	  CMD_NEEDS_WRITE },
	{ "ea_rm", { NULL }, "PATH NAME...", "remove attributes", cmd_ea_rm, CMD_NEEDS_WRITE },
	/* the dependency engine: what is pending in memory (deps.c) */
	{ "deps", { NULL }, "[--chains | --dot FILE | --svg FILE] [BLOCK|PATH]",
	  "pending updates: kind, block, bytes, state, what each waits for", cmd_deps, 0 },
	{ "why", { NULL }, "BLOCK",
	  "what keeps a block from going out as it is in memory", cmd_why, 0 },
	{ "flush", { NULL }, "[N]",
	  "write N epochs (default 1): per block, what went out, what was undone",
	  cmd_flush, CMD_NEEDS_WRITE },
	{ "crash", { NULL }, "",
	  "drop everything in memory and reopen the image as the disk holds it", cmd_crash, 0 },
	{ "stats", { NULL }, "",
	  "counters of the dependency engine and the cache", cmd_stats, 0 },
	/* the modifying commands: the operations of sufs-replay's script
	 * language, snapshot and snapdelete excepted (modify.c) */
	{ "mkdir", { NULL }, "PATH [MODE]", "make a directory", cmd_script, CMD_NEEDS_WRITE },
	{ "create", { NULL }, "PATH [MODE]", "make an empty file", cmd_script, CMD_NEEDS_WRITE },
	{ "mknod", { NULL }, "PATH c|b|p|s [MAJOR MINOR] [MODE]",
	  "make a device node, fifo or socket", cmd_script, CMD_NEEDS_WRITE },
	{ "write", { NULL }, "HOSTFILE PATH | PATH OFFSET LENGTH [SEED]",
	  "copy HOSTFILE in as the new file PATH (4 words or more: the script's write)",
	  cmd_write, CMD_NEEDS_WRITE },
	{ "punch", { NULL }, "PATH START [END]",
	  "free logical blocks START to END (default: to the end); the size stays",
	  cmd_punch, CMD_NEEDS_WRITE },
	{ "truncate", { NULL }, "PATH SIZE", "grow or shrink a file", cmd_script, CMD_NEEDS_WRITE },
	{ "link", { "ln", NULL }, "OLDPATH NEWPATH", "make a hard link", cmd_script,
	  CMD_NEEDS_WRITE },
	{ "unlink", { "rm", NULL }, "PATH", "remove a name", cmd_script, CMD_NEEDS_WRITE },
	{ "rename", { "mv", NULL }, "OLD NEW", "rename or move", cmd_script, CMD_NEEDS_WRITE },
	{ "symlink", { NULL }, "TARGET PATH", "make a symbolic link", cmd_script,
	  CMD_NEEDS_WRITE },
	{ "rmdir", { NULL }, "PATH", "remove an empty directory", cmd_script, CMD_NEEDS_WRITE },
	{ "chmod", { NULL }, "MODE PATH", "change permissions", cmd_script, CMD_NEEDS_WRITE },
	{ "chown", { NULL }, "UID:GID PATH", "change the owner", cmd_script, CMD_NEEDS_WRITE },
	{ "utimes", { NULL }, "PATH ATIME MTIME", "set access and modification times",
	  cmd_script, CMD_NEEDS_WRITE },
	{ "fsync", { NULL }, "PATH", "make a file durable", cmd_script, CMD_NEEDS_WRITE },
	{ "setxattr", { NULL }, "PATH NAME VALUE [create|replace]",
	  "set an extended attribute (VALUE 0x...: hex bytes)", cmd_script, CMD_NEEDS_WRITE },
	{ "rmxattr", { NULL }, "PATH NAME", "remove an extended attribute", cmd_script,
	  CMD_NEEDS_WRITE },
	{ "sync", { NULL }, "", "write back everything pending", cmd_script, CMD_NEEDS_WRITE },
	/* the editing commands: raw bytes by field name, for precise damage (edit.c) */
	{ "set_super_value", { "ssv", NULL }, "[-l] FIELD VALUE",
	  "set a superblock field (-l: list the fields)", cmd_set_super_value,
	  CMD_NEEDS_WRITE | CMD_LIST_FIELDS },
	{ "set_inode_field", { "sif", NULL }, "[-l] INODE FIELD VALUE",
	  "set an inode field (-l: list the fields)", cmd_set_inode_field,
	  CMD_NEEDS_WRITE | CMD_LIST_FIELDS },
	{ "set_bg", { "set_block_group", NULL }, "[-l] GROUP FIELD VALUE",
	  "set a group descriptor field (-l: list the fields)", cmd_set_bg,
	  CMD_NEEDS_WRITE | CMD_LIST_FIELDS },
	{ "set_dirent", { NULL }, "[-l] DIR NAME FIELD VALUE",
	  "set a field of a directory entry (-l: list the fields)", cmd_set_dirent,
	  CMD_NEEDS_WRITE | CMD_LIST_FIELDS },
	{ "set_bmap", { "setb", "seti", NULL }, "[-i] N [COUNT]",
	  "mark blocks (-i, seti: inodes) in use in the bitmap only", cmd_set_bmap,
	  CMD_NEEDS_WRITE },
	{ "clear_bmap", { "freeb", "freei", NULL }, "[-i] N [COUNT]",
	  "mark blocks (-i, freei: inodes) free in the bitmap only", cmd_clear_bmap,
	  CMD_NEEDS_WRITE },
	{ "clri", { NULL }, "INODE...", "zero inodes, bitmap left alone", cmd_clri,
	  CMD_NEEDS_WRITE },
	{ "zap_block", { "zap", NULL }, "[-f PATH] BLOCK [OFFSET [LENGTH [PATTERN]]]",
	  "overwrite bytes of a block with a pattern byte (default: all, 0)", cmd_zap_block,
	  CMD_NEEDS_WRITE },
	{ NULL, { NULL }, NULL, NULL, NULL, 0 }
};

const struct command *command_find(const char *name)
{
	const struct command *c;
	const char *const *a;

	for (c = commands; c->name; c++) {
		if (strcmp(c->name, name) == 0)
			return c;
		for (a = c->aliases; *a; a++)
			if (strcmp(*a, name) == 0)
				return c;
	}
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Reading a command line                                                    */
/* ------------------------------------------------------------------------ */

/*
 * Split a command line into words as sufs-replay's script language does
 * (script_split()): into a malloc()ed argv and buffer.  Returns the number
 * of words, or -1 with *why set.
 */
static int split_words(const char *line, char ***argvp, char **bufp, const char **why)
{
	size_t len = strlen(line);
	int max = (int)(len / 2 + 1), argc;   /* a word and a blank at least */
	char **argv = malloc(((size_t)max + 1) * sizeof(*argv));
	char *buf = malloc(len + 1);

	*why = "out of memory";
	if (len && line[len - 1] == '\n')
		len--;
	argc = argv && buf ? script_split(line, len, buf, argv, max, why) : -1;
	if (argc < 0) {
		free(argv);
		free(buf);
		return -1;
	}
	*argvp = argv;
	*bufp = buf;
	return argc;
}

int command_line(struct session *s, const char *line)
{
	const struct command *c;
	const char *p = line, *why;
	char **argv, *buf;
	int argc, rc;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '\n' || *p == '#')
		return 0;
	argc = split_words(line, &argv, &buf, &why);
	if (argc < 0) {
		char *e = escape_name(line, strlen(line));
		fflush(stdout);
		errmsg("%s: %s", why, e ? e : line);
		free(e);
		return 1;
	}
	if (argc == 0) {
		free(argv);
		free(buf);
		return 0;
	}
	if (!(c = command_find(argv[0]))) {
		rc = fail(argv[0], NULL, "unknown command (try help)");
	} else if ((c->flags & CMD_NEEDS_WRITE) && !s->writable &&
		   !((c->flags & CMD_LIST_FIELDS) && argc == 2 && strcmp(argv[1], "-l") == 0)) {
		rc = fail(argv[0], NULL, "the image is open read-only (use -w)");
	} else if ((c->flags & CMD_NEEDS_BITMAPS) && s->catastrophic) {
		rc = fail(argv[0], NULL, "catastrophic mode (-c) reads no bitmap");
	} else {
		rc = c->run(s, argc, argv) ? 1 : 0;
	}
	if ((fflush(stdout) || ferror(stdout)) && !rc)
		rc = fail(argv[0], NULL, "writing the output: %s", strerror(errno));
	clearerr(stdout); /* told once, by the command or here: not again at the end */
	free(argv);
	free(buf);
	return rc;
}
