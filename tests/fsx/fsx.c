/*
 * fsx - random I/O on one file, checked against a model of it in memory,
 * in the manner of fsx (the File System eXerciser of NeXT and Apple, run
 * since on every BSD and in xfstests).  It is written for sufs-fuse's
 * tests (tests/bats/fsx.bats) but runs on any file system.
 *
 * Each operation is chosen at random (a seeded generator: the same seed,
 * the same run) and made both on the file and on the model: read, write,
 * read and write through mmap, truncate, punch a hole (fallocate's
 * PUNCH_HOLE | KEEP_SIZE), allocate (plain fallocate), fsync, reopen,
 * and lseek's SEEK_DATA and SEEK_HOLE.  What a read gets must be what
 * the model holds; the file's size, the model's; a hole SEEK_HOLE reports
 * must read as zeros, and so must what SEEK_DATA skips.  Every so often,
 * and at the end, the whole file is read and compared.  On the first
 * difference the last operations are printed, the model is saved beside
 * the file (FILE.fsxgood) and the exit status is 1.
 *
 *   fsx [-N OPS] [-S SEED] [-l MAXLEN] [-o MAXOP] [-c CHECKEVERY]
 *       [--save MODEL] FILE
 *   fsx --verify MODEL FILE       the file must hold exactly MODEL
 *
 * Exit status: 0 no difference; 1 a difference, or an operation failed;
 * 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

enum op {
	OP_READ, OP_WRITE, OP_MAPREAD, OP_MAPWRITE, OP_TRUNCATE, OP_PUNCH, OP_FALLOC,
	OP_FSYNC, OP_REOPEN, OP_SEEK, OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
	"read", "write", "mapread", "mapwrite", "truncate", "punch", "falloc",
	"fsync", "reopen", "seek",
};

/* How often each is chosen (out of their sum). */
static const unsigned op_weights[OP_COUNT] = { 20, 20, 8, 8, 8, 8, 6, 2, 2, 6 };

#define LOG_SIZE 64

struct logged {
	uint64_t n;
	enum op op;
	uint64_t off, len, size_before;
};

struct run {
	const char *path;
	int fd;
	uint8_t *model;            /* the file's bytes as they must be */
	uint64_t size;             /* and its size */
	uint64_t maxlen, maxop;
	uint64_t rng;
	uint64_t n;                /* the operation under way */
	long page;
	struct logged log[LOG_SIZE];
	uint64_t counts[OP_COUNT];
};

/* ---- randomness and reporting ----------------------------------------------------- */

static uint64_t next(struct run *r)
{
	uint64_t z = (r->rng += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static uint64_t below(struct run *r, uint64_t n)
{
	return n ? next(r) % n : 0;
}

static void print_log(const struct run *r)
{
	uint64_t first = r->n >= LOG_SIZE ? r->n - LOG_SIZE + 1 : 0, i;

	fprintf(stderr, "fsx: the last operations (offset, length, size before):\n");
	for (i = first; i <= r->n; i++) {
		const struct logged *l = &r->log[i % LOG_SIZE];
		if (l->n != i)
			continue;
		fprintf(stderr, "  %8" PRIu64 " %-9s %#10" PRIx64 " %#8" PRIx64 "  %#" PRIx64 "\n",
			l->n, op_names[l->op], l->off, l->len, l->size_before);
	}
}

static void save_model(const struct run *r, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(r->model, 1, r->size, f) != r->size || fclose(f))
		fprintf(stderr, "fsx: %s: cannot save the model: %s\n", path, strerror(errno));
}

/* A difference or a failure: say it, with the log, and stop. */
static void __attribute__((noreturn, format(printf, 2, 3))) die(struct run *r, const char *fmt, ...)
{
	char good[4096];
	va_list ap;

	fprintf(stderr, "fsx: operation %" PRIu64 ": ", r->n);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_log(r);
	snprintf(good, sizeof(good), "%s.fsxgood", r->path);
	save_model(r, good);
	fprintf(stderr, "fsx: the model is in %s\n", good);
	exit(1);
}

/* ---- checking ---------------------------------------------------------------------- */

/* got must be the model's bytes at off. */
static void compare(struct run *r, const uint8_t *got, uint64_t off, uint64_t len,
		    const char *how)
{
	uint64_t i;

	for (i = 0; i < len; i++) {
		if (got[i] == r->model[off + i])
			continue;
		die(r, "%s at %#" PRIx64 " (byte %#" PRIx64 " of %#" PRIx64 "): got %#04x, "
		    "expected %#04x", how, off + i, i, len, got[i], r->model[off + i]);
	}
}

static void pread_all(struct run *r, uint8_t *buf, uint64_t off, uint64_t len)
{
	ssize_t got = pread(r->fd, buf, len, (off_t)off);

	if (got < 0)
		die(r, "pread(%#" PRIx64 ", %#" PRIx64 "): %s", off, len, strerror(errno));
	if ((uint64_t)got != len)
		die(r, "pread(%#" PRIx64 ", %#" PRIx64 "): %zd bytes", off, len, got);
}

static void check_size(struct run *r)
{
	struct stat st;

	if (fstat(r->fd, &st))
		die(r, "fstat: %s", strerror(errno));
	if ((uint64_t)st.st_size != r->size)
		die(r, "size %#" PRIx64 ", expected %#" PRIx64, (uint64_t)st.st_size, r->size);
}

static void check_all(struct run *r)
{
	uint8_t *buf = malloc(r->size ? r->size : 1);

	if (!buf)
		die(r, "out of memory");
	check_size(r);
	pread_all(r, buf, 0, r->size);
	compare(r, buf, 0, r->size, "whole file");
	free(buf);
}

/* ---- the operations ------------------------------------------------------------------- */

static void op_read(struct run *r, uint64_t off, uint64_t len)
{
	uint8_t *buf;

	if (off >= r->size)
		return;
	if (len > r->size - off)
		len = r->size - off;
	buf = malloc(len ? len : 1);
	pread_all(r, buf, off, len);
	compare(r, buf, off, len, "read");
	free(buf);
}

/* New bytes: the operation's number and their offset, never all zero. */
static void fill(struct run *r, uint8_t *p, uint64_t off, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(((off + i) % 251) + (r->n % 3) + 1);
}

static void grow_model(struct run *r, uint64_t size)
{
	if (size > r->size)
		memset(r->model + r->size, 0, size - r->size);
	r->size = size;
}

static void op_write(struct run *r, uint64_t off, uint64_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	ssize_t done;

	fill(r, buf, off, len);
	done = pwrite(r->fd, buf, len, (off_t)off);
	if (done < 0 || (uint64_t)done != len)
		die(r, "pwrite(%#" PRIx64 ", %#" PRIx64 "): %s", off, len,
		    done < 0 ? strerror(errno) : "short");
	if (off + len > r->size)
		grow_model(r, off + len);
	memcpy(r->model + off, buf, len);
	free(buf);
}

/* An mmap of the pages over [off, off + len). */
static uint8_t *map(struct run *r, uint64_t off, uint64_t len, int prot, uint64_t *skip)
{
	uint64_t start = off - off % (uint64_t)r->page;
	void *p;

	*skip = off - start;
	p = mmap(NULL, len + *skip, prot, MAP_SHARED, r->fd, (off_t)start);
	if (p == MAP_FAILED)
		die(r, "mmap(%#" PRIx64 ", %#" PRIx64 "): %s", start, len + *skip, strerror(errno));
	return p;
}

static void op_mapread(struct run *r, uint64_t off, uint64_t len)
{
	uint64_t skip;
	uint8_t *p;

	if (off >= r->size)
		return;
	if (len > r->size - off)
		len = r->size - off;
	if (!len)
		return;
	p = map(r, off, len, PROT_READ, &skip);
	compare(r, p + skip, off, len, "mapread");
	munmap(p, len + skip);
}

static void op_mapwrite(struct run *r, uint64_t off, uint64_t len)
{
	uint64_t skip;
	uint8_t *p;

	if (!len)
		return;
	/* a mapping writes only within the file: grow it first, as fsx does */
	if (off + len > r->size) {
		if (ftruncate(r->fd, (off_t)(off + len)))
			die(r, "ftruncate(%#" PRIx64 "): %s", off + len, strerror(errno));
		grow_model(r, off + len);
	}
	p = map(r, off, len, PROT_READ | PROT_WRITE, &skip);
	fill(r, p + skip, off, len);
	memcpy(r->model + off, p + skip, len);
	if (msync(p, len + skip, MS_SYNC))
		die(r, "msync: %s", strerror(errno));
	munmap(p, len + skip);
}

static void op_truncate(struct run *r, uint64_t size)
{
	if (ftruncate(r->fd, (off_t)size))
		die(r, "ftruncate(%#" PRIx64 "): %s", size, strerror(errno));
	grow_model(r, size);
}

static void op_punch(struct run *r, uint64_t off, uint64_t len)
{
	uint64_t end = off + len < r->size ? off + len : r->size;

	if (!len)
		return;
	if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len))
		die(r, "punch(%#" PRIx64 ", %#" PRIx64 "): %s", off, len, strerror(errno));
	if (off < end)
		memset(r->model + off, 0, end - off);
}

static void op_falloc(struct run *r, uint64_t off, uint64_t len)
{
	if (!len)
		return;
	if (fallocate(r->fd, 0, (off_t)off, (off_t)len))
		die(r, "fallocate(%#" PRIx64 ", %#" PRIx64 "): %s", off, len, strerror(errno));
	if (off + len > r->size)
		grow_model(r, off + len);
}

static void open_file(struct run *r, int flags)
{
	r->fd = open(r->path, O_RDWR | flags, 0644);
	if (r->fd < 0)
		die(r, "open %s: %s", r->path, strerror(errno));
}

static void op_reopen(struct run *r)
{
	if (close(r->fd))
		die(r, "close: %s", strerror(errno));
	open_file(r, 0);
}

/* What SEEK_DATA skips, and the hole SEEK_HOLE finds, read as zeros. */
static void op_seek(struct run *r, uint64_t off)
{
	off_t data, hole;
	uint64_t i;

	if (off >= r->size)
		return;
	data = lseek(r->fd, (off_t)off, SEEK_DATA);
	if (data < 0 && errno != ENXIO)
		die(r, "SEEK_DATA %#" PRIx64 ": %s", off, strerror(errno));
	for (i = off; i < (data < 0 ? r->size : (uint64_t)data); i++)
		if (r->model[i])
			die(r, "SEEK_DATA %#" PRIx64 " gave %jd, past data at %#" PRIx64, off,
			    (intmax_t)data, i);
	hole = lseek(r->fd, (off_t)off, SEEK_HOLE);
	if (hole < 0)
		die(r, "SEEK_HOLE %#" PRIx64 ": %s", off, strerror(errno));
	if ((uint64_t)hole < off || (uint64_t)hole > r->size)
		die(r, "SEEK_HOLE %#" PRIx64 " gave %jd (size %#" PRIx64 ")", off, (intmax_t)hole,
		    r->size);
	if ((uint64_t)hole < r->size && r->model[hole])
		die(r, "SEEK_HOLE %#" PRIx64 " gave %jd, which is data", off, (intmax_t)hole);
}

/* ---- the run -------------------------------------------------------------------------- */

static enum op choose(struct run *r)
{
	unsigned total = 0, pick, i;

	for (i = 0; i < OP_COUNT; i++)
		total += op_weights[i];
	pick = (unsigned)below(r, total);
	for (i = 0; pick >= op_weights[i]; i++)
		pick -= op_weights[i];
	return (enum op)i;
}

static void one(struct run *r)
{
	enum op op = choose(r);
	uint64_t off = below(r, r->maxlen), len = below(r, r->maxop + 1);
	struct logged *l = &r->log[r->n % LOG_SIZE];

	if (off + len > r->maxlen)
		len = r->maxlen - off;
	if (op == OP_TRUNCATE)
		len = 0;
	*l = (struct logged){ r->n, op, off, len, r->size };
	r->counts[op]++;
	switch (op) {
	case OP_READ: op_read(r, off, len); break;
	case OP_WRITE: op_write(r, off, len); break;
	case OP_MAPREAD: op_mapread(r, off, len); break;
	case OP_MAPWRITE: op_mapwrite(r, off, len); break;
	case OP_TRUNCATE: op_truncate(r, off); break;
	case OP_PUNCH: op_punch(r, off, len); break;
	case OP_FALLOC: op_falloc(r, off, len); break;
	case OP_FSYNC:
		if (fsync(r->fd))
			die(r, "fsync: %s", strerror(errno));
		break;
	case OP_REOPEN: op_reopen(r); break;
	case OP_SEEK: op_seek(r, off); break;
	default: break;
	}
}

static int verify(const char *model, const char *path)
{
	struct run r = { .path = path };
	struct stat st;
	FILE *f = fopen(model, "r");

	if (!f || fstat(fileno(f), &st)) {
		fprintf(stderr, "fsx: %s: %s\n", model, strerror(errno));
		if (f)
			fclose(f);
		return 1;
	}
	r.size = (uint64_t)st.st_size;
	r.model = malloc(r.size ? r.size : 1);
	if (!r.model || fread(r.model, 1, r.size, f) != r.size) {
		fprintf(stderr, "fsx: %s: cannot read it\n", model);
		free(r.model);
		fclose(f);
		return 1;
	}
	fclose(f);
	open_file(&r, 0);
	check_all(&r);
	printf("fsx: %s holds the %" PRIu64 " bytes of %s\n", path, r.size, model);
	free(r.model);
	return close(r.fd) ? 1 : 0;
}

/* A number, with a K, M or G suffix (powers of 1024); -1 when malformed. */
static int number(const char *s, uint64_t *out)
{
	char *end;
	unsigned shift = 0;

	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	}
	if (*end || *out > UINT64_MAX >> shift)
		return -1;
	*out <<= shift;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: fsx [-N OPS] [-S SEED] [-l MAXLEN] [-o MAXOP] [-c CHECKEVERY] "
		   "[--save MODEL] FILE\n"
		   "       fsx --verify MODEL FILE\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "save", required_argument, NULL, 's' },
		{ "verify", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct run r = { .maxlen = 1 << 20, .maxop = 1 << 16 };
	uint64_t ops = 10000, every = 1000, seed = 1, i;
	const char *save = NULL, *model = NULL;
	int c, bad = 0;

	while ((c = getopt_long(argc, argv, "N:S:l:o:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'N': bad |= number(optarg, &ops); break;
		case 'S': bad |= number(optarg, &seed); break;
		case 'l': bad |= number(optarg, &r.maxlen); break;
		case 'o': bad |= number(optarg, &r.maxop); break;
		case 'c': bad |= number(optarg, &every); break;
		case 's': save = optarg; break;
		case 'v': model = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (bad || optind != argc - 1 || r.maxlen == 0 || r.maxop > r.maxlen) {
		usage(stderr);
		return 2;
	}
	r.path = argv[optind];
	if (model)
		return verify(model, r.path);
	r.rng = seed;
	r.page = sysconf(_SC_PAGESIZE);
	r.model = calloc(1, r.maxlen);
	if (!r.model) {
		fprintf(stderr, "fsx: out of memory\n");
		return 1;
	}
	open_file(&r, O_CREAT | O_TRUNC);
	for (i = 0; i < ops; i++) {
		r.n = i;
		one(&r);
		if (every && i % every == every - 1)
			check_all(&r);
	}
	check_all(&r);
	if (save)
		save_model(&r, save);
	printf("fsx: %" PRIu64 " operations, seed %" PRIu64 ", no difference (", ops, seed);
	for (i = 0; i < OP_COUNT; i++)
		printf("%s%s %" PRIu64, i ? ", " : "", op_names[i], r.counts[i]);
	printf(")\n");
	free(r.model);
	return close(r.fd) ? 1 : 0;
}
