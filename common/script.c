/*
 * script.c - the operation script language: split a line into words, find
 * its operation in the table, parse the arguments, make the one library
 * call, and compare what came back with what the line expected.
 *
 * A line either parses completely, or nothing is done (SCRIPT_BAD_LINE):
 * every handler checks all its arguments before it calls the library.
 */
#include "config.h"

#include "script.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A write longer than this goes to the library in pieces of this size, so
 * that a `write /f 0 4G` does not need 4 GiB of memory. */
#define WRITE_PIECE (16u << 20)

/* ------------------------------------------------------------------------ */
/* Error names                                                               */
/* ------------------------------------------------------------------------ */

#define E(name) { #name, name }
static const struct {
	const char *name;
	int err;
} errno_names[] = {
	E(EPERM), E(ENOENT), E(EIO), E(ENXIO), E(E2BIG), E(EBADF), E(EAGAIN),
	E(ENOMEM), E(EACCES), E(EFAULT), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
	E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ETXTBSY),
	E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK), E(ERANGE),
	E(ENAMETOOLONG), E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(EOVERFLOW),
	E(EOPNOTSUPP), E(EDQUOT), E(ESTALE), E(ECANCELED), E(ENODATA),
	{ "ECHECKSUM", SUFS_ECHECKSUM }, { "ECORRUPT", SUFS_ECORRUPT },
	{ "ENOSLOT", SUFS_ENOSLOT }, { "ENOTSNAP", SUFS_ENOTSNAP },
};
#undef E

const char *script_errno_name(int err)
{
	size_t i;

	for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	return NULL;
}

static int errno_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (strcmp(errno_names[i].name, name) == 0)
			return errno_names[i].err;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Words                                                                     */
/* ------------------------------------------------------------------------ */

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

#define MAX_WORDS 8   /* more than any operation takes: the rest is refused */

struct words {
	int argc;
	char *argv[MAX_WORDS + 1];
	char *buf;
};

int script_split(const char *line, size_t len, char *out, char **argv, int max,
		 const char **why)
{
	const char *p = line, *end = line + len;
	char *o = out;
	int argc = 0;

	for (;;) {
		char quote = 0;

		while (p < end && is_blank(*p))
			p++;
		if (p == end || *p == '#' || argc == max)
			break;  /* (past max words: the caller tells "too many") */
		argv[argc++] = o;
		while (p < end && (quote || !is_blank(*p))) {
			char c = *p++;
			if (quote == '\'') {
				if (c == '\'')
					quote = 0;
				else
					*o++ = c;
			} else if (c == '\'' || c == '"') {
				if (!quote)
					quote = c;
				else if (c == quote)
					quote = 0;
				else
					*o++ = c;
			} else if (c == '\\') {
				int hi, lo;
				if (p == end) {
					*why = "a backslash ends the line";
					return -1;
				}
				c = *p++;
				if (c == 'n') {
					*o++ = '\n';
				} else if (c == 't') {
					*o++ = '\t';
				} else if (c == 'x') {
					hi = p < end ? hex_digit(p[0]) : -1;
					lo = hi < 0 || p + 1 >= end ? -1 : hex_digit(p[1]);
					if (lo < 0 || (hi == 0 && lo == 0)) {
						*why = lo < 0 ? "\\x needs two hex digits"
							 : "\\x00: a NUL byte cannot be in a word";
						return -1;
					}
					*o++ = (char)(hi << 4 | lo);
					p += 2;
				} else {
					*o++ = c;
				}
			} else {
				*o++ = c;
			}
		}
		if (quote) {
			*why = "unterminated quote";
			return -1;
		}
		*o++ = '\0';
	}
	argv[argc] = NULL;
	return argc;
}

/* Split a line (its newline, if any, left out) into at most MAX_WORDS + 1
 * words (one more than any operation takes, so that "too many" can be
 * told).  Returns 0, or -1 with *why set. */
static int split_words(const char *line, struct words *w, const char **why)
{
	size_t len = strlen(line);

	if (len && line[len - 1] == '\n')
		len--;
	w->argc = 0;
	w->argv[0] = NULL;
	w->buf = malloc(len + 1);
	if (!w->buf) {
		*why = "out of memory";
		return -1;
	}
	w->argc = script_split(line, len, w->buf, w->argv, MAX_WORDS + 1, why);
	if (w->argc < 0) {
		w->argc = 0;
		return -1;
	}
	return 0;
}

static int is_plain(const char *word, size_t len)
{
	size_t i;

	if (len == 0 || word[0] == '#' || word[0] == '!')
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)word[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("/._-+=,:@%^~", c)))
			return 0;
	}
	return 1;
}

void script_quote(FILE *f, const char *word, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)word;
	size_t i = 0, k;

	if (is_plain(word, len)) {
		fwrite(word, 1, len, f);
		return;
	}
	fputc('"', f);
	while (i < len) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			i++;
		} else if (c == '\n') {
			fputs("\\n", f);
			i++;
		} else if (c == '\t') {
			fputs("\\t", f);
			i++;
		} else if (c >= 0x20 && c < 0x7f) {
			fputc(c, f);
			i++;
		} else if ((k = utf8_printable(s + i, len - i)) != 0) {
			fwrite(s + i, 1, k, f);
			i += k;
		} else {
			fputc('\\', f);
			fputc('x', f);
			fputc(hex[c >> 4], f);
			fputc(hex[c & 15], f);
			i++;
		}
	}
	fputc('"', f);
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */
/* ------------------------------------------------------------------------ */

/* Everything one line needs while it runs. */
struct run {
	struct sufs_fs *fs;
	struct script_ctx *ctx;
	int argc;                 /* the operation's arguments, its name excluded */
	char **argv;
	char *err;
	size_t errlen;
};

static void say(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* What a handler returns for a bad argument: positive, so never a library
 * result. */
#define BAD_ARG 1

/* A word as the script would spell it, for a message (malloc()ed; NULL
 * when memory ran out): control bytes never reach the terminal raw. */
static char *quoted(const char *word)
{
	char *q = NULL;
	size_t qlen = 0;
	FILE *m = open_memstream(&q, &qlen);

	if (!m)
		return NULL;
	script_quote(m, word, strlen(word));
	if (fclose(m)) {
		free(q);
		return NULL;
	}
	return q;
}

/* A bad argument: say so and return BAD_ARG (handlers return it as is). */
static int bad_arg(struct run *r, const char *what, const char *arg)
{
	char *q = quoted(arg);

	say(r->err, r->errlen, "%s: bad %s %s", r->argv[-1], what, q ? q : "?");
	free(q);
	return BAD_ARG;
}

/* "what 'word'" when the word is printable ASCII without blanks, or
 * what "w\x1bord" as the script would spell it. */
static void say_word(char *err, size_t errlen, const char *what, const char *word)
{
	const char *p;
	char *q;

	for (p = word; *p > ' ' && *p < 0x7f; p++)
		;
	if (!*p) {
		say(err, errlen, "%s '%s'", what, word);
		return;
	}
	q = quoted(word);
	say(err, errlen, "%s %s", what, q ? q : "?");
	free(q);
}

#define DESCRIBE_MAX 256   /* bytes of a line a message shows */

/* The line as a script would spell it (malloc()ed), cut to DESCRIBE_MAX
 * bytes with "..." at the end. */
static char *describe(const struct words *w)
{
	char *s = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&s, &len);
	int i;

	if (!m)
		return NULL;
	for (i = 0; i < w->argc; i++) {
		if (i > 0)
			fputc(' ', m);
		if (i == 0 && w->argv[0][0] == '!')
			fputs(w->argv[0], m);  /* an expectation, checked already */
		else
			script_quote(m, w->argv[i], strlen(w->argv[i]));
	}
	if (fclose(m)) {
		free(s);
		return NULL;
	}
	/* a line of a megabyte (a long path) must leave room for the reason */
	if (len > DESCRIBE_MAX)
		memcpy(s + DESCRIBE_MAX - 3, "...", 4);
	return s;
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

/* Permission bits in octal: 0 to 7777. */
static int arg_mode(struct run *r, const char *s, uint32_t *mode)
{
	uint32_t v = 0;
	const char *p;

	if (!*s || strlen(s) > 5)
		return bad_arg(r, "mode", s);
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '7')
			return bad_arg(r, "mode", s);
		v = v * 8 + (uint32_t)(*p - '0');
	}
	if (v > 07777)
		return bad_arg(r, "mode", s);
	*mode = v;
	return 0;
}

static int arg_size(struct run *r, const char *what, const char *s, uint64_t *v)
{
	return sufs_parse_size(s, v) ? bad_arg(r, what, s) : 0;
}

static int arg_u32(struct run *r, const char *what, const char *s, uint32_t *v)
{
	return parse_u32(s, v) ? bad_arg(r, what, s) : 0;
}

/* [-]SECONDS[.FRACTION]: the fraction has at most 9 digits (nanoseconds). */
static int arg_time(struct run *r, const char *what, const char *s, int64_t *sec,
		    uint32_t *nsec)
{
	const char *dot = strchr(s, '.');
	char whole[32];
	size_t wlen = dot ? (size_t)(dot - s) : strlen(s);
	uint32_t ns = 0, scale = 100000000;
	const char *p;

	if (wlen == 0 || wlen >= sizeof(whole))
		return bad_arg(r, what, s);
	memcpy(whole, s, wlen);
	whole[wlen] = '\0';
	for (p = whole + (whole[0] == '-'); *p; p++)
		if (*p < '0' || *p > '9')
			return bad_arg(r, what, s);
	if (!whole[whole[0] == '-'] || parse_i64(whole, sec))
		return bad_arg(r, what, s);
	if (dot) {
		if (!dot[1] || strlen(dot + 1) > 9)
			return bad_arg(r, what, s);
		for (p = dot + 1; *p; p++, scale /= 10) {
			if (*p < '0' || *p > '9')
				return bad_arg(r, what, s);
			ns += (uint32_t)(*p - '0') * scale;
		}
	}
	/* before 1970 the nanoseconds count up from the second below, as in
	 * a struct timespec: -0.25 is second -1 and 750000000 ns */
	if (whole[0] == '-' && ns) {
		if (*sec == INT64_MIN)
			return bad_arg(r, what, s);
		--*sec;
		ns = 1000000000u - ns;
	}
	*nsec = ns;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The bytes of `write`                                                      */
/* ------------------------------------------------------------------------ */

/* SplitMix64's output function (Steele, Lea and Flood, 2014). */
static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15u;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/*
 * Byte o is byte (o mod 8) (least significant first) of
 * mix64(seed * 0x9e3779b97f4a7c15 + o / 8).
 */
void script_pattern(uint64_t seed, uint64_t off, void *buf, size_t len)
{
	uint8_t *out = buf;
	uint64_t base = seed * 0x9e3779b97f4a7c15u, word;
	size_t i = 0, k, n;

	/* a word at a time, least significant byte first (the compiler makes
	 * a whole word's eight stores one), a part of one at either end */
	while (i < len) {
		word = mix64(base + (off >> 3));
		if (!(off & 7) && len - i >= 8) {
			uint8_t *p = out + i;
			p[0] = (uint8_t)word;
			p[1] = (uint8_t)(word >> 8);
			p[2] = (uint8_t)(word >> 16);
			p[3] = (uint8_t)(word >> 24);
			p[4] = (uint8_t)(word >> 32);
			p[5] = (uint8_t)(word >> 40);
			p[6] = (uint8_t)(word >> 48);
			p[7] = (uint8_t)(word >> 56);
			i += 8;
			off += 8;
			continue;
		}
		word >>= 8 * (off & 7);
		n = 8 - (size_t)(off & 7);
		if (n > len - i)
			n = len - i;
		for (k = 0; k < n; k++)
			out[i + k] = (uint8_t)(word >> (8 * k));
		i += n;
		off += n;
	}
}

/* ------------------------------------------------------------------------ */
/* The operations                                                            */
/* ------------------------------------------------------------------------ */

/*
 * Each handler parses its arguments (returning BAD_ARG after bad_arg() if
 * one is wrong, before anything is done) and then returns what the library
 * said: 0 or a negative error code, from the path lookup or the operation.
 */

int script_inode_path(const char *path, uint32_t *ino, const char **rest)
{
	const char *close = path[0] == '<' ? strchr(path, '>') : NULL, *p;
	uint64_t n = 0;

	if (!close || close == path + 1 || (close[1] != '\0' && close[1] != '/'))
		return 0;
	for (p = path + 1; p < close; p++) {
		if (!isdigit((unsigned char)*p))
			return 0;
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > UINT32_MAX)
			n = UINT32_MAX; /* no such inode, whatever the digits */
	}
	*ino = (uint32_t)n;
	*rest = close[1] ? close + 2 : close + 1;
	return 1;
}

/*
 * Where path starts: *base and the path from there.  With ctx->inode_paths
 * (sufs-debug), a path <INO> or <INO>/REST starts at inode INO, which must
 * be in use (else ENOENT); any other path starts at the current directory
 * (or the root, for one starting with /).
 */
static int start_of(struct run *r, const char *path, uint32_t *base, const char **rest)
{
	struct sufs_stat st;
	uint32_t ino;

	*base = r->ctx->cwd;
	*rest = path;
	if (!r->ctx->inode_paths || !script_inode_path(path, &ino, rest))
		return 0;
	if (ino == 0 || ino > sufs_get_super(r->fs)->inodes_count ||
	    sufs_stat(r->fs, ino, &st) != 0 || st.mode == 0)
		return -ENOENT;
	*base = ino;
	return 0;
}

/* sufs_namei() from where path starts; <INO> alone is that inode. */
static int path_inode(struct run *r, const char *path, int follow, uint32_t *ino)
{
	const char *rest;
	uint32_t base;
	int rc = start_of(r, path, &base, &rest);

	if (rc)
		return rc;
	if (rest != path && !*rest) {
		*ino = base;
		return 0;
	}
	return sufs_namei(r->fs, base, rest, follow, ino);
}

/* sufs_namei_parent() from where path starts.  <INO> alone names no
 * entry of a directory: EINVAL (<INO>/NAME does). */
static int path_parent(struct run *r, const char *path, uint32_t *dir, const char **name,
		       size_t *len)
{
	const char *rest;
	uint32_t base;
	int rc = start_of(r, path, &base, &rest);

	if (rc)
		return rc;
	if (rest != path && !*rest)
		return -EINVAL;
	return sufs_namei_parent(r->fs, base, rest, dir, name, len);
}

/*
 * A trailing slash says the last name is a directory (POSIX pathname
 * resolution): the parent lookups strip it, so the operations that name an
 * entry check it here.  slashed() says whether path ends in one; what() is
 * what the entry dir/name is: -ENOENT when there is none, 1 a directory,
 * 0 anything else.
 */
static int slashed(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		if (path[--n - 1] != '/')
			return 1;
	return 0;
}

static int what(struct run *r, uint32_t dir, const char *name, size_t len)
{
	struct sufs_stat st;
	uint32_t ino;
	int rc = sufs_lookup(r->fs, dir, name, len, &ino);

	if (!rc)
		rc = sufs_stat(r->fs, ino, &st);
	return rc ? rc : S_ISDIR(st.mode);
}

/* For a name with a trailing slash that names what is there: 0 when it is
 * a directory, else ENOTDIR (or the lookup's error). */
static int must_be_dir(struct run *r, uint32_t dir, const char *name, size_t len)
{
	int rc = what(r, dir, name, len);

	return rc == 0 ? -ENOTDIR : rc < 0 ? rc : 0;
}

/* For a name with a trailing slash that an operation makes, and that only
 * mkdir may make: EEXIST if it is there (any type), else ENOENT. */
static int no_new_slashed(struct run *r, uint32_t dir, const char *name, size_t len)
{
	int rc = what(r, dir, name, len);

	return rc >= 0 ? -EEXIST : rc;
}

static int op_mkdir(struct run *r)
{
	uint32_t mode = 0755, dir, ino;
	const char *name;
	size_t len;
	int rc;

	if (r->argc > 1 && arg_mode(r, r->argv[1], &mode))
		return BAD_ARG;
	rc = path_parent(r, r->argv[0], &dir, &name, &len);
	if (!rc)
		rc = sufs_mkdir(r->fs, dir, name, len, mode, &r->ctx->cred, &ino);
	return rc;
}

static int op_create(struct run *r)
{
	uint32_t mode = 0644, dir, ino;
	const char *name;
	size_t len;
	int rc;

	if (r->argc > 1 && arg_mode(r, r->argv[1], &mode))
		return BAD_ARG;
	rc = path_parent(r, r->argv[0], &dir, &name, &len);
	/* as open(2) with O_CREAT: a file there is not a directory, and a
	 * new name with a slash would have to be one */
	if (!rc && slashed(r->argv[0])) {
		rc = what(r, dir, name, len);
		rc = rc == 0 ? -ENOTDIR : rc == 1 || rc == -ENOENT ? -EISDIR : rc;
	}
	if (!rc)
		rc = sufs_create(r->fs, dir, name, len, mode, &r->ctx->cred, &ino);
	return rc;
}

/* mknod PATH c|b MAJOR MINOR [MODE] or mknod PATH p|s [MODE] */
static int op_mknod(struct run *r)
{
	uint32_t type, major = 0, minor = 0, mode = 0644, dir, ino;
	const char *t = r->argv[1], *name;
	int devnum, rc;
	size_t len;

	if (strcmp(t, "c") == 0)
		type = S_IFCHR;
	else if (strcmp(t, "b") == 0)
		type = S_IFBLK;
	else if (strcmp(t, "p") == 0)
		type = S_IFIFO;
	else if (strcmp(t, "s") == 0)
		type = S_IFSOCK;
	else
		return bad_arg(r, "type (c, b, p or s)", t);
	devnum = type == S_IFCHR || type == S_IFBLK;
	if (devnum ? r->argc != 4 && r->argc != 5 : r->argc != 2 && r->argc != 3) {
		say(r->err, r->errlen, "mknod: wrong number of arguments (usage: mknod PATH %s)",
		    devnum ? "c|b MAJOR MINOR [MODE]" : "p|s [MODE]");
		return BAD_ARG;
	}
	if (devnum && (arg_u32(r, "major number", r->argv[2], &major) ||
		       arg_u32(r, "minor number", r->argv[3], &minor)))
		return BAD_ARG;
	if (r->argc == (devnum ? 5 : 3) && arg_mode(r, r->argv[r->argc - 1], &mode))
		return BAD_ARG;
	rc = path_parent(r, r->argv[0], &dir, &name, &len);
	if (!rc && slashed(r->argv[0]))
		rc = no_new_slashed(r, dir, name, len);
	if (!rc)
		rc = sufs_mknod(r->fs, dir, name, len, type | mode, major, minor, &r->ctx->cred,
				&ino);
	return rc;
}

static int op_write(struct run *r)
{
	uint64_t off, len, seed = 0;
	uint8_t *buf;
	size_t piece;
	uint32_t ino;
	int rc;

	if (arg_size(r, "offset", r->argv[1], &off) || arg_size(r, "length", r->argv[2], &len))
		return BAD_ARG;
	if (r->argc > 3 && parse_u64(r->argv[3], &seed))
		return bad_arg(r, "seed", r->argv[3]);
	if (len > UINT64_MAX - off)
		return -EFBIG; /* past any file's end, as a write there would be */
	rc = path_inode(r, r->argv[0], 1, &ino);
	if (rc)
		return rc;
	piece = len < WRITE_PIECE ? (size_t)len : WRITE_PIECE;
	buf = malloc(piece ? piece : 1);
	if (!buf)
		return -ENOMEM;
	do {
		size_t n = len < piece ? (size_t)len : piece;
		script_pattern(seed, off, buf, n);
		rc = sufs_write(r->fs, ino, off, buf, n);
		off += n;
		len -= n;
	} while (!rc && len);
	free(buf);
	return rc;
}

static int op_truncate(struct run *r)
{
	uint64_t size;
	uint32_t ino;
	int rc;

	if (arg_size(r, "size", r->argv[1], &size))
		return BAD_ARG;
	rc = path_inode(r, r->argv[0], 1, &ino);
	if (!rc)
		rc = sufs_truncate(r->fs, ino, size);
	return rc;
}

/* link OLDPATH NEWPATH: like link(2), a symlink named by OLDPATH is linked
 * itself, not followed. */
static int op_link(struct run *r)
{
	uint32_t ino, dir;
	const char *name;
	size_t len;
	int rc;

	rc = path_inode(r, r->argv[0], 0, &ino);
	if (!rc)
		rc = path_parent(r, r->argv[1], &dir, &name, &len);
	if (!rc && slashed(r->argv[1]))
		rc = no_new_slashed(r, dir, name, len);
	if (!rc)
		rc = sufs_link(r->fs, ino, dir, name, len);
	return rc;
}

static int op_unlink(struct run *r)
{
	uint32_t dir;
	const char *name;
	size_t len;
	int rc;

	rc = path_parent(r, r->argv[0], &dir, &name, &len);
	if (!rc && slashed(r->argv[0]))
		rc = must_be_dir(r, dir, name, len); /* a directory: unlink's EISDIR */
	if (!rc)
		rc = sufs_unlink(r->fs, dir, name, len);
	return rc;
}

static int op_rmdir(struct run *r)
{
	uint32_t dir;
	const char *name;
	size_t len;
	int rc;

	rc = path_parent(r, r->argv[0], &dir, &name, &len);
	if (!rc)
		rc = sufs_rmdir(r->fs, dir, name, len);
	return rc;
}

static int op_rename(struct run *r)
{
	uint32_t sdir, ddir;
	const char *sname, *dname;
	size_t slen, dlen;
	int rc;

	rc = path_parent(r, r->argv[0], &sdir, &sname, &slen);
	if (!rc)
		rc = path_parent(r, r->argv[1], &ddir, &dname, &dlen);
	/* a slash on either name: what is moved must be a directory */
	if (!rc && (slashed(r->argv[0]) || slashed(r->argv[1])))
		rc = must_be_dir(r, sdir, sname, slen);
	if (!rc)
		rc = sufs_rename(r->fs, sdir, sname, slen, ddir, dname, dlen);
	return rc;
}

/* symlink TARGET PATH, in the order of ln -s */
static int op_symlink(struct run *r)
{
	uint32_t dir, ino;
	const char *name;
	size_t len;
	int rc;

	rc = path_parent(r, r->argv[1], &dir, &name, &len);
	if (!rc && slashed(r->argv[1]))
		rc = no_new_slashed(r, dir, name, len);
	if (!rc)
		rc = sufs_symlink(r->fs, dir, name, len, r->argv[0], &r->ctx->cred, &ino);
	return rc;
}

/* chmod, chown and utimes follow a symlink, as chmod(2), chown(2) and
 * utimensat(2) without AT_SYMLINK_NOFOLLOW do. */
static int setattr_path(struct run *r, const char *path, const struct sufs_setattr *sa)
{
	uint32_t ino;
	int rc = path_inode(r, path, 1, &ino);

	return rc ? rc : sufs_setattr(r->fs, ino, sa);
}

static int op_chmod(struct run *r)
{
	struct sufs_setattr sa = { .mask = SUFS_SET_MODE };

	if (arg_mode(r, r->argv[0], &sa.mode))
		return BAD_ARG;
	return setattr_path(r, r->argv[1], &sa);
}

/* chown UID:GID, UID or :GID */
static int op_chown(struct run *r)
{
	struct sufs_setattr sa = { 0 };
	const char *owner = r->argv[0], *colon = strchr(owner, ':');
	char uid[16];
	size_t ulen = colon ? (size_t)(colon - owner) : strlen(owner);

	if (ulen >= sizeof(uid))
		return bad_arg(r, "owner (UID:GID)", owner);
	memcpy(uid, owner, ulen);
	uid[ulen] = '\0';
	if (ulen) {
		if (parse_u32(uid, &sa.uid))
			return bad_arg(r, "owner (UID:GID)", owner);
		sa.mask |= SUFS_SET_UID;
	}
	if (colon) {
		if (parse_u32(colon + 1, &sa.gid))
			return bad_arg(r, "owner (UID:GID)", owner);
		sa.mask |= SUFS_SET_GID;
	}
	if (!sa.mask)
		return bad_arg(r, "owner (UID:GID)", owner);
	return setattr_path(r, r->argv[1], &sa);
}

static int op_utimes(struct run *r)
{
	struct sufs_setattr sa = { .mask = SUFS_SET_ATIME | SUFS_SET_MTIME };

	if (arg_time(r, "access time", r->argv[1], &sa.atime, &sa.atime_ns) ||
	    arg_time(r, "modification time", r->argv[2], &sa.mtime, &sa.mtime_ns))
		return BAD_ARG;
	return setattr_path(r, r->argv[0], &sa);
}

/*
 * An attribute's value as a line gives it: the word's bytes, or with 0x
 * in front hex digits, two a byte (as setfattr -v takes it).  *out is
 * malloc()ed (at least one byte), or the value is bad.
 */
static int arg_value(struct run *r, const char *s, uint8_t **out, size_t *len)
{
	size_t n = strlen(s), i;
	int hi, lo;

	*out = malloc(n + 1);
	if (!*out)
		return -ENOMEM;
	if (n < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
		memcpy(*out, s, n);
		*len = n;
		return 0;
	}
	for (i = 2; i + 1 < n; i += 2) {
		hi = hex_digit(s[i]);
		lo = hex_digit(s[i + 1]);
		if (hi < 0 || lo < 0)
			break;
		(*out)[i / 2 - 1] = (uint8_t)(hi << 4 | lo);
	}
	if (i != n) {
		free(*out);
		*out = NULL;
		return bad_arg(r, "value (0x and an even number of hex digits)", s);
	}
	*len = (n - 2) / 2;
	return 0;
}

/* setxattr PATH NAME VALUE [create|replace]: setxattr(2), following a
 * symlink at the end, as the caller (uid 0 is privileged). */
static int op_setxattr(struct run *r)
{
	uint8_t *value;
	size_t len;
	uint32_t ino;
	int flags = 0, rc;

	if (r->argc > 3) {
		if (strcmp(r->argv[3], "create") == 0)
			flags = SUFS_XATTR_CREATE;
		else if (strcmp(r->argv[3], "replace") == 0)
			flags = SUFS_XATTR_REPLACE;
		else
			return bad_arg(r, "flag (create or replace)", r->argv[3]);
	}
	rc = arg_value(r, r->argv[2], &value, &len);
	if (rc)
		return rc;
	rc = path_inode(r, r->argv[0], 1, &ino);
	if (!rc)
		rc = sufs_setxattr(r->fs, ino, r->argv[1], value, len, flags, &r->ctx->cred);
	free(value);
	return rc;
}

/* rmxattr PATH NAME: removexattr(2) */
static int op_rmxattr(struct run *r)
{
	uint32_t ino;
	int rc = path_inode(r, r->argv[0], 1, &ino);

	return rc ? rc : sufs_removexattr(r->fs, ino, r->argv[1], &r->ctx->cred);
}

static int op_fsync(struct run *r)
{
	uint32_t ino;
	int rc = path_inode(r, r->argv[0], 1, &ino);

	return rc ? rc : sufs_fsync(r->fs, ino);
}

static int op_sync(struct run *r)
{
	return sufs_sync(r->fs);
}

static int op_snapshot(struct run *r)
{
	return sufs_snap_create(r->fs, r->argv[0], NULL);
}

static int op_snapdelete(struct run *r)
{
	return sufs_snap_delete(r->fs, r->argv[0]);
}

static const struct op {
	const char *name;
	int min, max;             /* number of arguments */
	const char *usage;
	int (*run)(struct run *r);
	unsigned paths;           /* bit i: argument i is a path the operation
	                             acts on (script_line_parse) */
} ops[] = {
	{ "mkdir", 1, 2, "PATH [MODE]", op_mkdir, 0x1 },
	{ "create", 1, 2, "PATH [MODE]", op_create, 0x1 },
	{ "mknod", 2, 5, "PATH TYPE [MAJOR MINOR] [MODE]", op_mknod, 0x1 },
	{ "write", 3, 4, "PATH OFFSET LENGTH [SEED]", op_write, 0x1 },
	{ "truncate", 2, 2, "PATH SIZE", op_truncate, 0x1 },
	{ "link", 2, 2, "OLDPATH NEWPATH", op_link, 0x3 },
	{ "unlink", 1, 1, "PATH", op_unlink, 0x1 },
	{ "rename", 2, 2, "OLDPATH NEWPATH", op_rename, 0x3 },
	{ "symlink", 2, 2, "TARGET PATH", op_symlink, 0x2 },
	{ "rmdir", 1, 1, "PATH", op_rmdir, 0x1 },
	{ "chmod", 2, 2, "MODE PATH", op_chmod, 0x2 },
	{ "chown", 2, 2, "UID:GID PATH", op_chown, 0x2 },
	{ "utimes", 3, 3, "PATH ATIME MTIME", op_utimes, 0x1 },
	{ "setxattr", 3, 4, "PATH NAME VALUE [create|replace]", op_setxattr, 0x1 },
	{ "rmxattr", 2, 2, "PATH NAME", op_rmxattr, 0x1 },
	{ "fsync", 1, 1, "PATH", op_fsync, 0x1 },
	{ "sync", 0, 0, "", op_sync, 0 },
	{ "snapshot", 1, 1, "NAME", op_snapshot, 0 },
	{ "snapdelete", 1, 1, "NAME", op_snapdelete, 0 },
};

static const struct op *op_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(ops[i].name, name) == 0)
			return &ops[i];
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* One line                                                                  */
/* ------------------------------------------------------------------------ */

int script_line_parse(const char *line, struct script_line *out)
{
	struct words w;
	const struct op *op;
	const char *why;
	int first, i;

	memset(out, 0, sizeof(*out));
	if (split_words(line, &w, &why)) {
		free(w.buf);
		return -1;
	}
	out->buf = w.buf;
	if (w.argc == 0)
		return 0;
	first = w.argv[0][0] == '!';
	op = first < w.argc ? op_find(w.argv[first]) : NULL;
	if (!op || w.argc - first - 1 < op->min || w.argc - first - 1 > op->max)
		return -1;
	out->op = op->name;
	out->arg0 = first + 1 < w.argc ? w.argv[first + 1] : NULL;
	for (i = 0; i < op->max && first + 1 + i < w.argc; i++)
		if (op->paths & (1u << i))
			out->path[out->npaths++] = w.argv[first + 1 + i];
	return 0;
}

void script_line_free(struct script_line *l)
{
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

void script_ctx_init(struct script_ctx *ctx, struct sufs_fs *fs, uint32_t uid, uint32_t gid)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->cwd = sufs_get_super(fs)->root_ino;
	ctx->cred.uid = uid;
	ctx->cred.gid = gid;
}

/* "No such file or directory (ENOENT)" */
static void error_text(int rc, char *buf, size_t size)
{
	const char *name = script_errno_name(-rc);

	if (name)
		snprintf(buf, size, "%s (%s)", sufs_strerror(rc), name);
	else
		snprintf(buf, size, "%s", sufs_strerror(rc));
}

int script_exec_line(struct sufs_fs *fs, const char *line, struct script_ctx *ctx,
		     char *err, size_t errlen)
{
	struct words w;
	const struct op *op;
	struct run r;
	const char *why;
	char *what, text[160];
	int first = 0, status;

	ctx->ran = 0;
	ctx->rc = 0;
	ctx->expected = 0;
	if (errlen)
		err[0] = '\0';
	if (split_words(line, &w, &why)) {
		say(err, errlen, "%s", why);
		free(w.buf);
		return SCRIPT_BAD_LINE;
	}
	if (w.argc == 0) {
		free(w.buf);
		return SCRIPT_OK;
	}
	status = SCRIPT_BAD_LINE;
	if (w.argv[0][0] == '!') {
		ctx->expected = errno_by_name(w.argv[0] + 1);
		if (!ctx->expected) {
			say_word(err, errlen, "unknown error name", w.argv[0]);
			goto out;
		}
		first = 1;
		if (w.argc == 1) {
			say(err, errlen, "%s: no operation follows", w.argv[0]);
			goto out;
		}
	}
	op = op_find(w.argv[first]);
	if (!op) {
		say_word(err, errlen, "unknown operation", w.argv[first]);
		goto out;
	}
	r.fs = fs;
	r.ctx = ctx;
	r.argc = w.argc - first - 1;
	r.argv = w.argv + first + 1;
	r.err = err;
	r.errlen = errlen;
	if (r.argc < op->min || r.argc > op->max) {
		say(err, errlen, "%s: wrong number of arguments (usage: %s%s%s)", op->name,
		    op->name, *op->usage ? " " : "", op->usage);
		goto out;
	}
	ctx->rc = op->run(&r);
	if (ctx->rc == BAD_ARG) {
		ctx->rc = 0;
		goto out;
	}
	ctx->ran = 1;
	ctx->operations++;
	status = SCRIPT_OK;
	if (ctx->rc == -ctx->expected)
		goto out;
	status = SCRIPT_FAILED;
	what = describe(&w);
	if (ctx->rc == 0) {
		say(err, errlen, "%s: succeeded, but %s was expected", what ? what : op->name,
		    w.argv[0] + 1);
	} else {
		error_text(ctx->rc, text, sizeof(text));
		if (ctx->expected)
			say(err, errlen, "%s: %s, but %s was expected", what ? what : op->name,
			    text, w.argv[0] + 1);
		else
			say(err, errlen, "%s: %s", what ? what : op->name, text);
	}
	free(what);
out:
	free(w.buf);
	return status;
}
