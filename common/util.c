#include "config.h"
#include "util.h"
#include "ctl.h"
#include "sufs.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *prog = "sufs";

void prog_init(const char *name, char **argv)
{
	prog = name;
	argv[0] = (char *)name; /* getopt's own messages name it too */
	/* past a file size limit (ulimit -f) a write fails with EFBIG, which
	 * is reported and cleaned up after, rather than killing the program
	 * halfway through an output */
	signal(SIGXFSZ, SIG_IGN);
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	progress_break();
	fprintf(stderr, "%s: %s", prog, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void errmsg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void warnmsg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void print_version(void)
{
	printf("%s (sufs) %s\n", prog, sufs_version());
}

/* Decimal, or hex after 0x: never octal, whatever zeros lead. */
static int number_base(const char *s)
{
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
}

int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtoull(s, &end, number_base(s));
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	if (parse_u64(s, &v) || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s || *s == ' ')
		return -1;
	errno = 0;
	v = strtoll(s, &end, number_base(s + (*s == '-')));
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

size_t utf8_len(const void *str, size_t n)
{
	const unsigned char *s = str;
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t utf8_printable(const void *str, size_t n)
{
	const unsigned char *s = str;
	size_t k;

	if (s[0] < 0x80)
		return 0;
	k = utf8_len(s, n);
	/* C1 controls, U+0080 to U+009F, are not printable */
	return k && !(s[0] == 0xc2 && s[1] < 0xa0) ? k : 0;
}

void json_str(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, k;

	fputc('"', f);
	while (i < n) {
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
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			fputc(c, f);
			i++;
		} else if ((k = utf8_len(s + i, n - i)) != 0) {
			fwrite(s + i, 1, k, f);
			i += k;
		} else {
			/* not UTF-8: keep the byte visible and the output valid JSON */
			fprintf(f, "\\u%04x", c);
			i++;
		}
	}
	fputc('"', f);
}

/* ---- names for people ------------------------------------------------------ */

size_t escape_name_into(const char *name, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)name;
	size_t i = 0, o = 0, k;

	while (i < len) {
		unsigned char c = s[i];
		if (c == '\\' || c == '\n' || c == '\t') {
			out[o++] = '\\';
			out[o++] = c == '\\' ? '\\' : c == '\n' ? 'n' : 't';
			i++;
		} else if (c >= 0x20 && c < 0x7f) {
			out[o++] = (char)c;
			i++;
		} else if ((k = utf8_printable(s + i, len - i)) != 0) {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
			i++;
		}
	}
	out[o] = '\0';
	return o;
}

char *escape_name(const char *name, size_t len)
{
	char *out = malloc(4 * len + 1);

	if (out)
		escape_name_into(name, len, out);
	return out;
}

void print_name(FILE *f, const char *name, size_t len)
{
	char small[4 * SUFS_NAME_MAX + 1];
	char *out = len <= SUFS_NAME_MAX ? small : malloc(4 * len + 1);
	size_t n;

	if (!out) {
		fputs("?", f);
		return;
	}
	n = escape_name_into(name, len, out);
	fwrite(out, 1, n, f);
	if (out != small)
		free(out);
}

const char *shown(const char *s)
{
	/* a few at a time, for the arguments of one message */
	static _Thread_local char buf[4][4 * 1024 + 4];
	static _Thread_local unsigned next;
	char *out = buf[next++ % 4];
	size_t len = strlen(s), max = (sizeof(buf[0]) - 4) / 4;

	if (len == 0)
		return "''"; /* an empty name, seen as one */
	if (len <= max) {
		escape_name_into(s, len, out);
	} else {
		size_t n = escape_name_into(s, max, out);
		memcpy(out + n, "...", 4);
	}
	return out;
}

/* The first bad group descriptor of a sound superblock sb: what
 * sufs_group_check() said of it (and *why), its number in *bad; 0 when
 * every one is good (or the table cannot be read). */
static int bad_group(struct sufs_dev *dev, const struct sufs_super *sb, uint32_t *bad,
		     const char **why)
{
	struct sufs_group_layout l0;
	struct sufs_group gd;
	uint32_t bs = sb->block_size, per = bs / SUFS_GROUP_DESC_SIZE, g;
	uint8_t *blk = malloc(bs);
	int rc = 0;

	if (!blk)
		return 0;
	sufs_group_layout(sb, 0, &l0);
	for (g = 0; g < sb->groups_count && !rc; g++) {
		if (g % per == 0 && sufs_dev_read(dev, (l0.gdt_start + g / per) * bs, blk, bs) != 0)
			break;
		rc = sufs_group_check(sb, g, blk + (g % per) * SUFS_GROUP_DESC_SIZE, &gd, why);
		*bad = g;
	}
	free(blk);
	return rc;
}

/* An image another program writes: which, when it is a sufs-fuse mount. */
static const char *in_use_error(const char *image, int rc)
{
	static char buf[PATH_MAX + 160];
	char *mountpoint;
	long pid;

	if (!ctl_mounted_info(image, &pid, &mountpoint))
		return sufs_strerror(rc);
	snprintf(buf, sizeof(buf), "%s (sufs-fuse, pid %ld, has it mounted on %s)",
		 sufs_strerror(rc), pid, shown(mountpoint));
	free(mountpoint);
	return buf;
}

const char *open_error(const char *image, int rc)
{
	static char buf[160];
	uint8_t raw[SUFS_SB_SIZE];
	struct sufs_super sb;
	struct sufs_dev *dev;
	const char *why = NULL;
	uint32_t g;

	if (rc == -SUFS_EINUSE)
		return in_use_error(image, rc);
	if ((rc != -SUFS_ECORRUPT && rc != -SUFS_ECHECKSUM) || sufs_dev_open(image, 0, &dev))
		return sufs_strerror(rc);
	/* read again, as sufs_open_dev() did: only on the way to a message */
	buf[0] = 0;
	if (sufs_dev_read(dev, SUFS_SB_OFFSET, raw, sizeof(raw)) == 0) {
		sufs_super_decode(raw, &sb);
		if (sb.checksum != sufs_super_csum(raw))
			snprintf(buf, sizeof(buf), "%s (superblock)", sufs_strerror(-SUFS_ECHECKSUM));
		else if (sufs_super_check(&sb, 0, &why) != 0 && why)
			snprintf(buf, sizeof(buf), "%s (superblock field %s)",
				 sufs_strerror(-SUFS_ECORRUPT), why);
		else if ((rc = bad_group(dev, &sb, &g, &why)) != 0)
			snprintf(buf, sizeof(buf), "%s (group %" PRIu32 " descriptor%s%s)",
				 sufs_strerror(rc), g, why ? " field " : "", why ? why : "");
	}
	sufs_dev_close(dev);
	return buf[0] ? buf : sufs_strerror(rc);
}

const char *type_name(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:  return "regular file";
	case S_IFDIR:  return "directory";
	case S_IFLNK:  return "symlink";
	case S_IFCHR:  return "character device";
	case S_IFBLK:  return "block device";
	case S_IFIFO:  return "fifo";
	case S_IFSOCK: return "socket";
	}
	return mode ? "bad type" : "free";
}

double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void progress_start(struct progress *p, const char *label, uint64_t total)
{
	const char *env = getenv("SUFS_PROGRESS_DELAY");
	char *end;

	memset(p, 0, sizeof(*p));
	p->label = label;
	p->total = total;
	p->start = now_seconds();
	p->delay = 1.0;
	if (env && *env) {
		double d = strtod(env, &end);
		if (!*end && d >= 0)
			p->delay = d;
	}
	p->active = isatty(STDERR_FILENO);
}

/* The bar drawn last, while its line is not ended. */
static struct progress *bar_shown;

static void progress_draw(struct progress *p)
{
	const int width = 40;
	int fill = p->total ? (int)((double)p->done * width / (double)p->total) : 0;
	if (fill > width)
		fill = width;
	if (p->total)
		fprintf(stderr, "\r%s: [%.*s%*s] %llu/%llu", p->label, fill,
			"########################################", width - fill, "",
			(unsigned long long)p->done, (unsigned long long)p->total);
	else
		fprintf(stderr, "\r%s: %llu", p->label, (unsigned long long)p->done);
	fflush(stderr);
	p->drawn = 1;
	bar_shown = p;
}

void progress_update(struct progress *p, uint64_t done)
{
	double t;

	p->done = done;
	/* the clock is read once in 64 steps, however the job counts them */
	if (!p->active || (done >= p->checked && done - p->checked < 64))
		return;
	p->checked = done;
	t = now_seconds();
	if (t - p->start < p->delay || t - p->last_draw < 0.1)
		return;
	p->last_draw = t;
	progress_draw(p);
}

void progress_break(void)
{
	struct progress *p = bar_shown;

	if (p) {
		progress_draw(p);
		fputc('\n', stderr);
		p->drawn = 0;
		bar_shown = NULL;
	}
}

void progress_stop(struct progress *p)
{
	if (p->drawn && bar_shown == p)
		progress_break();
	p->active = 0;
}

void progress_end(struct progress *p)
{
	if (p->total)
		p->done = p->total;
	progress_stop(p);
}

char *seconds_str(int64_t sec, uint32_t nsec, char *buf, size_t size)
{
	if (sec < 0 && nsec)
		/* the nanoseconds count up from the second below: (-1, 5e8)
		 * is -0.5 */
		snprintf(buf, size, "-%" PRIu64 ".%09" PRIu32, (uint64_t)-(sec + 1),
			 1000000000u - nsec);
	else
		snprintf(buf, size, "%" PRId64 ".%09" PRIu32, sec, nsec);
	return buf;
}

int source_date_epoch(int64_t *sec)
{
	const char *s = getenv("SOURCE_DATE_EPOCH"), *c;

	if (!s)
		return 0;
	for (c = s; *c >= '0' && *c <= '9'; c++)
		;
	if (!*s || *c || (s[0] == '0' && s[1]) || parse_i64(s, sec)) {
		errmsg("invalid SOURCE_DATE_EPOCH '%s': expected seconds since 1970 (digits)",
		       shown(s));
		return -1;
	}
	return 1;
}
