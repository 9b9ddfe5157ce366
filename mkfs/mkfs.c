/*
 * mkfs.c - mkfs.sufs: make a sufs file system in an image file or on a
 * block device, optionally filled from a directory tree (-d).
 *
 * The steps, each of which may stop the run with its own exit status:
 *   1. read the options and SOURCE_DATE_EPOCH                  (EXIT_USAGE)
 *   2. look at the -d source directory                         (EXIT_SOURCE)
 *   3. look at the target and settle the size                  (EXIT_USAGE, EXIT_TARGET)
 *   4. compute the layout                                      (EXIT_LAYOUT)
 *   5. probe the target for a file system or partition table   (EXIT_TARGET)
 *      and count what the -d tree takes: its inodes, and a block at
 *      least for each directory and long symlink            (EXIT_SOURCE)
 *      -n stops here, once it has checked that step 6 could open the target
 *      and printed the layout
 *   6. open, size and clear the target                         (EXIT_TARGET, EXIT_IO)
 *   7. sufs_mkfs(), populate(), sufs_close()                   (EXIT_IO, EXIT_SOURCE)
 * Nothing is written before step 6.  From step 7 on, a failure abandons
 * the file system: the library writes the superblock's magic number only
 * when sufs_close() succeeds, so a failed run leaves no image that claims
 * to be a file system, and a file this run created is removed.
 */
#include "config.h"
#include "populate.h"
#include "sufs.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Exit statuses (common/util.h; man/mkfs.sufs.8, EXIT STATUS), by what
 * they mean to mkfs.sufs. */
enum {
	EXIT_TARGET = EXIT_IMAGE,   /* the image cannot be used (open, create, size,
				       holds a file system) */
	EXIT_LAYOUT = EXIT_FAILED,  /* the requested layout does not fit */
	EXIT_SOURCE = EXIT_FILE,    /* the -d source cannot be read, or does not fit */
};

struct args {
	struct sufs_mkfs_opts mo;
	const char *image;
	const char *srcdir;
	uint64_t size;
	int have_size;
	int dry_run;
	int force;
	int quiet;
	int root_owner_set;
};

/* What step 3 learnt about the target. */
struct target {
	int exists;
	int is_blockdev;
	uint64_t old_size;        /* bytes in the file or device before we start */
	char *made;               /* the file we created (IMAGE may be a symlink to it) */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [options] IMAGE [SIZE]\n"
		"Make a sufs file system in the image file or block device IMAGE.\n"
		"SIZE (KiB, or blocks with -b, as mke2fs; or with a K, M, G or T suffix)\n"
		"creates or resizes an image file; a block device is used whole unless SIZE\n"
		"says less.\n"
		"\n"
		"  -b BLOCK-SIZE        block size: 1024 to 65536, a power of two (default 4096)\n"
		"  -i BYTES-PER-INODE   one inode for every so many bytes (default 16384)\n"
		"  -N INODES            number of inodes (overrides -i)\n"
		"  -g BLOCKS-PER-GROUP  blocks in a group: a multiple of 8, 64 to 8 * block size\n"
		"  -L LABEL             volume label, at most 63 bytes\n"
		"  -U UUID              UUID as 8-4-4-4-12 hex digits, or \"random\"\n"
		"  -d DIR               copy the directory tree DIR into the new file system\n"
		"  -O [^]xattr          extended attributes and ACLs (default: on; ^xattr: off)\n"
		"  -E root_owner[=UID:GID]\n"
		"                       owner of the root directory: UID:GID, or the caller\n"
		"                       (default: the owner of DIR with -d, else the caller)\n"
		"  -n                   dry run: check everything, print the layout, write nothing\n"
		"  -f, -F               overwrite a file system or partition table found on IMAGE\n"
		"  -q                   quiet: print nothing but errors\n"
		"      --help           print this help and exit\n"
		"  -V, --version        print the version and exit\n"
		"\n"
		"SOURCE_DATE_EPOCH in the environment fixes every timestamp (and the UUID,\n"
		"unless -U is given) so that the same inputs make the same image, byte for byte.\n"
		"Exit status: 0 done, 1 usage error, 2 the image cannot be used, 4 the layout\n"
		"does not fit, 8 the -d source cannot be used, 16 writing the image failed.\n"
		"See mkfs.sufs(8).\n",
		prog);
}

static void usage_error(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	exit(EXIT_USAGE);
}

/* ---- option values ---------------------------------------------------------- */

/* -b, -i: a size (suffixes allowed) from min to max. */
static uint32_t opt_size(const char *arg, uint64_t min, uint64_t max, const char *what,
			 const char *range)
{
	uint64_t v;

	if (sufs_parse_size(arg, &v) || v < min || v > max) {
		errmsg("invalid %s '%s': %s", what, shown(arg), range);
		usage_error();
	}
	return (uint32_t)v;
}

static uint32_t opt_u32(int opt, const char *arg)
{
	uint32_t v;

	if (parse_u32(arg, &v) || v == 0) {
		errmsg("invalid value for -%c: '%s' (a whole number above 0)", opt, shown(arg));
		usage_error();
	}
	return v;
}

/*
 * SIZE as mke2fs reads it: with a K, M, G or T suffix, so many bytes; a
 * bare number is KiB, or blocks of -b's size when -b is given.
 */
static uint64_t parse_fs_size(const char *arg, uint32_t block_size)
{
	uint64_t v, unit = block_size ? block_size : 1024;
	size_t len = strlen(arg);

	if (sufs_parse_size(arg, &v)) {
		errmsg("invalid SIZE '%s': a number of %s, or with a K, M, G or T suffix",
		       shown(arg), block_size ? "blocks (-b)" : "KiB");
		usage_error();
	}
	if (len && arg[len - 1] >= '0' && arg[len - 1] <= '9') {
		if (v > UINT64_MAX / unit) {
			errmsg("invalid SIZE '%s': too large", shown(arg));
			usage_error();
		}
		v *= unit;
	}
	return v;
}

/* -O: comma-separated features, each "NAME" to set it or "^NAME" to
 * leave it clear. */
static void parse_features(struct args *a, const char *arg)
{
	char *copy = strdup(arg), *opt, *save = NULL;

	if (!copy) {
		errmsg("%s", strerror(ENOMEM));
		exit(EXIT_USAGE);
	}
	for (opt = strtok_r(copy, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		int off = opt[0] == '^';
		if (strcmp(opt + off, "xattr") == 0) {
			a->mo.no_xattr = off;
		} else {
			errmsg("unknown feature '%s' (known: xattr, ^xattr)", shown(opt));
			free(copy);
			usage_error();
		}
	}
	free(copy);
}

/* -E: comma-separated extended options. */
static void parse_extended(struct args *a, const char *arg)
{
	char *copy = strdup(arg), *opt, *save = NULL;

	if (!copy) {
		errmsg("%s", strerror(ENOMEM));
		exit(EXIT_USAGE);
	}
	for (opt = strtok_r(copy, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		if (strcmp(opt, "root_owner") == 0) {
			a->mo.root_uid = (uint32_t)getuid();
			a->mo.root_gid = (uint32_t)getgid();
			a->root_owner_set = 1;
		} else if (strncmp(opt, "root_owner=", 11) == 0) {
			char *uid = opt + 11, *gid = strchr(uid, ':');
			if (gid)
				*gid++ = '\0';
			if (!gid || parse_u32(uid, &a->mo.root_uid) ||
			    parse_u32(gid, &a->mo.root_gid)) {
				errmsg("invalid root_owner '%s': expected root_owner=UID:GID (numbers)",
				       shown(arg));
				free(copy);
				usage_error();
			}
			a->root_owner_set = 1;
		} else {
			errmsg("unknown extended option '%s'", shown(opt));
			free(copy);
			usage_error();
		}
	}
	free(copy);
}

static void parse_source_date_epoch(struct args *a)
{
	int64_t v;
	int rc = source_date_epoch(&v);

	if (rc < 0)
		exit(EXIT_USAGE);
	if (rc) {
		a->mo.fixed_time = 1;
		a->mo.time_sec = v;
		a->mo.time_nsec = 0;
	}
}

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *uuid_opt = NULL;
	int c;

	memset(a, 0, sizeof(*a));
	a->mo.root_uid = (uint32_t)getuid();
	a->mo.root_gid = (uint32_t)getgid();
	while ((c = getopt_long(argc, argv, "b:i:N:g:L:U:d:E:O:nfFqV", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			a->mo.block_size = opt_size(optarg, SUFS_MIN_BLOCK_SIZE, SUFS_MAX_BLOCK_SIZE,
						    "block size",
						    "a power of two from 1024 to 65536");
			if (a->mo.block_size & (a->mo.block_size - 1)) {
				errmsg("invalid block size '%s': a power of two from 1024 to 65536",
				       shown(optarg));
				usage_error();
			}
			break;
		case 'i':
			a->mo.bytes_per_inode = opt_size(optarg, 1024, 1u << 30, "bytes per inode",
							 "from 1024 to 1G");
			break;
		case 'N':
			a->mo.inodes = opt_u32(c, optarg);
			break;
		case 'g':
			a->mo.blocks_per_group = opt_u32(c, optarg);
			break;
		case 'L':
			if (strlen(optarg) > sizeof(a->mo.label) - 1) {
				errmsg("label '%s' is too long: %zu bytes, at most %zu", shown(optarg),
				       strlen(optarg), sizeof(a->mo.label) - 1);
				usage_error();
			}
			strcpy(a->mo.label, optarg);
			break;
		case 'U':
			uuid_opt = optarg;
			break;
		case 'd':
			a->srcdir = optarg;
			break;
		case 'E':
			parse_extended(a, optarg);
			break;
		case 'O':
			parse_features(a, optarg);
			break;
		case 'n':
			a->dry_run = 1;
			break;
		case 'f':
		case 'F':
			a->force = 1;
			break;
		case 'q':
			a->quiet = 1;
			break;
		case 'H':
			usage(stdout);
			exit(EXIT_OK);
		case 'V':
			print_version();
			exit(EXIT_OK);
		default:
			usage_error();
		}
	}
	if (optind >= argc) {
		errmsg("no IMAGE given");
		usage_error();
	}
	if (argc - optind > 2) {
		errmsg("too many arguments: '%s'", shown(argv[optind + 2]));
		usage_error();
	}
	a->image = argv[optind];
	if (argc - optind == 2) {
		a->size = parse_fs_size(argv[optind + 1], a->mo.block_size);
		a->have_size = 1;
	}
	if (a->mo.blocks_per_group) {
		uint32_t bs = a->mo.block_size ? a->mo.block_size : SUFS_DEF_BLOCK_SIZE;
		if (a->mo.blocks_per_group % 8 || a->mo.blocks_per_group < 64 ||
		    a->mo.blocks_per_group > 8 * bs) {
			errmsg("invalid blocks per group %u: a multiple of 8 from 64 to %u "
			       "(8 * block size)", a->mo.blocks_per_group, 8 * bs);
			usage_error();
		}
	}
	parse_source_date_epoch(a);
	if (uuid_opt && strcmp(uuid_opt, "random") == 0) {
		int rc = uuid_random(a->mo.uuid);
		if (rc) {
			errmsg("cannot make a random UUID: %s", sufs_strerror(rc));
			exit(EXIT_USAGE);
		}
		a->mo.have_uuid = 1;
	} else if (uuid_opt) {
		if (uuid_parse(uuid_opt, a->mo.uuid)) {
			errmsg("invalid UUID '%s': expected 8-4-4-4-12 hex digits, or \"random\"",
			       shown(uuid_opt));
			usage_error();
		}
		a->mo.have_uuid = 1;
	}
}

/* ---- the source and the target ------------------------------------------------ */

static void check_source(const char *dir)
{
	struct stat st;

	if (stat(dir, &st)) {
		errmsg("cannot use source directory %s: %s", shown(dir), strerror(errno));
		exit(EXIT_SOURCE);
	}
	if (!S_ISDIR(st.st_mode)) {
		errmsg("source %s is not a directory", shown(dir));
		exit(EXIT_SOURCE);
	}
	if (access(dir, R_OK | X_OK)) {
		errmsg("cannot read source directory %s: %s", shown(dir), strerror(errno));
		exit(EXIT_SOURCE);
	}
}

static uint64_t blockdev_size(const char *path)
{
	uint64_t bytes = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		errmsg("cannot open %s: %s", shown(path), strerror(errno));
		exit(EXIT_TARGET);
	}
	if (ioctl(fd, BLKGETSIZE64, &bytes)) {
		errmsg("cannot get the size of %s: %s", shown(path), strerror(errno));
		close(fd);
		exit(EXIT_TARGET);
	}
	close(fd);
	return bytes;
}

/* Step 3: what is the target, and how big will the file system be? */
static void examine_target(struct args *a, struct target *t)
{
	struct stat st;

	memset(t, 0, sizeof(*t));
	if (stat(a->image, &st)) {
		if (errno != ENOENT) {
			errmsg("cannot use %s: %s", shown(a->image), strerror(errno));
			exit(EXIT_TARGET);
		}
		if (!a->have_size) {
			errmsg("%s does not exist: give a SIZE to create it", shown(a->image));
			usage_error();
		}
		return;
	}
	t->exists = 1;
	if (S_ISBLK(st.st_mode)) {
		t->is_blockdev = 1;
		t->old_size = blockdev_size(a->image);
		if (a->have_size && a->size > t->old_size) {
			errmsg("SIZE %llu is larger than the device %s (%llu bytes)",
			       (unsigned long long)a->size, shown(a->image),
			       (unsigned long long)t->old_size);
			exit(EXIT_USAGE);
		}
	} else if (S_ISREG(st.st_mode)) {
		t->old_size = (uint64_t)st.st_size;
	} else {
		errmsg("%s is neither a regular file nor a block device", shown(a->image));
		exit(EXIT_TARGET);
	}
	if (!a->have_size)
		a->size = t->old_size;
}

/* "an ext4 file system", "a dos partition table" */
#define MKFS_CACHE_BYTES (8u << 20)

static const char *article(const char *what)
{
	return strchr("aeiouAEIOU", what[0]) ? "an" : "a";
}

/* Step 5: refuse to overwrite what someone may still want. */
static void probe_target(const struct args *a, const struct target *t)
{
	char *what = NULL;
	int rc;

	if (!t->exists || t->old_size == 0)
		return;
	rc = sufs_dev_probe(a->image, &what);
	if (rc) {
		errmsg("cannot probe %s: %s", shown(a->image), sufs_strerror(rc));
		exit(EXIT_TARGET);
	}
	if (what && !a->force) {
		errmsg("%s contains %s %s; use -f to overwrite", shown(a->image), article(what),
		       shown(what));
		free(what);
		exit(EXIT_TARGET);
	}
	free(what);
}

/*
 * -n: whether step 6 could open the target, found out without creating or
 * changing anything.  An existing target is opened as step 6 opens it,
 * without O_CREAT or O_TRUNC, and closed at once; for a missing one, the
 * directory it would be made in must let us add a name.
 */
static void check_writable(const struct args *a, const struct target *t)
{
	char *copy;
	int fd, err = 0;

	if (t->exists) {
		fd = open(a->image, O_RDWR | O_CLOEXEC | (t->is_blockdev ? O_EXCL : 0));
		if (fd < 0)
			err = errno;
		else
			close(fd);
	} else {
		copy = strdup(a->image);
		if (!copy)
			err = ENOMEM;
		else if (access(dirname(copy), W_OK | X_OK))
			err = errno;
		free(copy);
	}
	if (err) {
		errmsg("cannot open %s for writing: %s", shown(a->image), strerror(err));
		exit(EXIT_TARGET);
	}
}

/* The library's bytes per inode when -i is not given (sufs_mkfs_opts). */
#define DEFAULT_BYTES_PER_INODE 16384u

/*
 * Step 4 failed.  When too many inodes were the cause, say so, with the
 * most that fit: a group's inode bitmap is one block, so a group holds at
 * most 8 * block size inodes, and its inode table must leave room for
 * data.  Returns 0 if fewer inodes would not have helped either.
 */
static int explain_inodes(const struct args *a)
{
	struct sufs_mkfs_opts o = a->mo;
	struct sufs_super l;
	uint64_t bpi = a->mo.bytes_per_inode ? a->mo.bytes_per_inode : DEFAULT_BYTES_PER_INODE;
	uint64_t asked = a->mo.inodes ? a->mo.inodes : a->size / bpi, cap;
	uint32_t lo = 16, hi, mid, bs;
	char opt[48];

	o.have_uuid = 1;          /* no random UUID for each try */
	o.inodes = lo;
	if (sufs_mkfs_layout(a->size, &o, &l))
		return 0;
	/* The bitmap's limit in every group is the usual answer; else search. */
	bs = l.block_size;
	cap = (uint64_t)l.groups_count * 8 * bs;
	hi = cap < UINT32_MAX ? (uint32_t)cap : UINT32_MAX;
	o.inodes = hi;
	if (sufs_mkfs_layout(a->size, &o, &l) == 0) {
		lo = hi;
	} else {
		while (lo < hi) {
			mid = lo + (hi - lo + 1) / 2;
			o.inodes = mid;
			if (sufs_mkfs_layout(a->size, &o, &l) == 0)
				lo = mid;
			else
				hi = mid - 1;
		}
		o.inodes = lo;
		sufs_mkfs_layout(a->size, &o, &l);
	}
	if (asked <= l.inodes_count)
		return 0;         /* then it was not the count after all */
	if (a->mo.inodes)
		snprintf(opt, sizeof(opt), "-N %u", a->mo.inodes);
	else
		snprintf(opt, sizeof(opt), "-i %llu%s", (unsigned long long)bpi,
			 a->mo.bytes_per_inode ? "" : " (the default)");
	if (l.inodes_per_group == 8 * bs)
		errmsg("%s: too many inodes (%llu): a group holds at most %u (8 times the block "
		       "size), %u in %u %s; use %s or a smaller -g", opt,
		       (unsigned long long)asked, l.inodes_per_group, l.inodes_count,
		       l.groups_count, l.groups_count == 1 ? "group" : "groups",
		       a->mo.inodes ? "a smaller -N" : "a larger -i");
	else
		errmsg("%s: too many inodes (%llu): at most %u leave room for data, %u in each "
		       "of %u %s; use %s", opt, (unsigned long long)asked, l.inodes_count,
		       l.inodes_per_group, l.groups_count,
		       l.groups_count == 1 ? "group" : "groups",
		       a->mo.inodes ? "a smaller -N" : "a larger -i");
	return 1;
}

/*
 * Every group holds at least one block of inodes, and inode numbers are 32
 * bits: so many groups that even that is too many inodes.  1 after the
 * message, 0 when the groups are not too many.
 */
static int too_many_groups(const struct args *a, uint64_t groups, uint32_t bs, uint32_t bpg)
{
	uint64_t most = UINT32_MAX / (bs / SUFS_INODE_SIZE);
	int big_b = bs == SUFS_MAX_BLOCK_SIZE, big_g = bpg == 8 * bs;
	char advice[96];

	if (groups <= most)
		return 0;
	/* only what is not at its limit yet can help */
	if (big_b && big_g)
		snprintf(advice, sizeof(advice), "use a smaller SIZE (at most %llu bytes)",
			 (unsigned long long)(most * bpg * bs));
	else
		snprintf(advice, sizeof(advice), "use a larger %s, or a smaller SIZE",
			 big_g ? "-b" : big_b ? "-g" : "-g or -b");
	errmsg("cannot lay out a file system of %llu bytes on %s: its %llu groups of %u blocks "
	       "are too many, at most %llu can have a block of inodes each (inode numbers are "
	       "32 bits); %s",
	       (unsigned long long)a->size, shown(a->image), (unsigned long long)groups, bpg,
	       (unsigned long long)most, advice);
	return 1;
}

/*
 * The layout fails even with the fewest inodes: say why when it is the size,
 * the group size or the number of groups.  1 after the message, 0 when none
 * explains it.
 */
static int explain_geometry(const struct args *a)
{
	struct sufs_super sb = { 0 };
	uint32_t bs = a->mo.block_size ? a->mo.block_size : SUFS_DEF_BLOCK_SIZE;
	uint32_t bpg = a->mo.blocks_per_group ? a->mo.blocks_per_group : 8 * bs;
	uint64_t blocks = a->size / bs, groups = (blocks + bpg - 1) / bpg, need;

	if (blocks < 64) {
		errmsg("cannot lay out a file system of %llu bytes on %s: too small, it needs "
		       "at least 64 blocks (%llu bytes with %u-byte blocks)",
		       (unsigned long long)a->size, shown(a->image), 64ull * bs, bs);
		return 1;
	}
	if (groups > UINT32_MAX)
		return too_many_groups(a, groups, bs, bpg);
	/* the first group: its superblock, the descriptors of all groups,
	 * two bitmaps, one block of inodes, and the root directory's block */
	sb.block_size = bs;
	sb.inode_size = SUFS_INODE_SIZE;
	sb.blocks_per_group = bpg;
	sb.blocks_count = blocks;
	sb.groups_count = (uint32_t)groups;
	sb.gdt_blocks = (uint32_t)((groups * SUFS_GROUP_DESC_SIZE + bs - 1) / bs);
	sb.inodes_per_group = bs / SUFS_INODE_SIZE;
	need = sufs_group_overhead(&sb, 0) + 1;
	if (need <= bpg)
		return too_many_groups(a, groups, bs, bpg);
	errmsg("cannot lay out a file system of %llu bytes on %s: its %llu groups of %u blocks "
	       "need %u blocks of group descriptors, and the first group cannot hold them "
	       "with its own metadata (%llu blocks); use a larger %s or a smaller SIZE",
	       (unsigned long long)a->size, shown(a->image), (unsigned long long)groups, bpg,
	       sb.gdt_blocks, (unsigned long long)need, bpg < 8 * bs ? "-g" : "-b");
	return 1;
}

/* ---- output -------------------------------------------------------------------- */

static void print_bytes(uint64_t bytes)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes / 1024;
	unsigned i = 0;

	if (bytes < 1024) {
		printf("%llu bytes", (unsigned long long)bytes);
		return;
	}
	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	printf("%.1f %s", v, unit[i]);
}

/* Would the counts fit in the layout?  The root directory takes a block
 * of its free ones. */
static int fits(const struct populate_need *need, const struct sufs_super *layout)
{
	return need->inodes <= layout->free_inodes && need->min_blocks + 1 <= layout->free_blocks;
}

/*
 * Step 5 for -d: count the tree (the progress bar's total too) and stop
 * when it cannot fit: more files than free inodes, or more directories and
 * long symlinks than free blocks.  The types of the entries alone, read
 * with their names, are most often enough to tell that it fits; else each
 * is looked at.  The data is not read (blocks of zeros become holes), so
 * a tree that passes may still not fit.
 */
static void check_fits(const struct args *a, struct populate_opts *po,
		       const struct sufs_super *layout)
{
	struct populate_need need;
	int rc;

	/* a slow symlink's target fills one block at most (man/sufs.5) */
	po->symlink_max = layout->block_size < SUFS_PATH_MAX - 1 ? layout->block_size
								 : SUFS_PATH_MAX - 1;
	rc = populate_count(a->srcdir, po, 0, &need);
	po->entries = need.entries;
	if (!rc && !need.too_long && !fits(&need, layout))
		rc = populate_count(a->srcdir, po, 1, &need);
	if (rc) {
		errmsg("%s: %s", shown(a->srcdir), strerror(ENOMEM));
		exit(EXIT_SOURCE);
	}
	if (need.too_long) {
		errmsg("%s: a symlink's target of %llu bytes is longer than a %u-byte block, "
		       "the most a symlink holds; use a larger -b", shown(need.too_long),
		       (unsigned long long)need.too_long_size, layout->block_size);
		exit(EXIT_SOURCE);
	}
	if (need.inodes > layout->free_inodes) {
		errmsg("%s does not fit on %s: its files, directories and links need %llu "
		       "inodes, the file system has %u; use a smaller -i, or -N", shown(a->srcdir),
		       shown(a->image), (unsigned long long)need.inodes, layout->free_inodes);
		exit(EXIT_SOURCE);
	}
	if (!fits(&need, layout)) {
		errmsg("%s does not fit on %s: its directories, long symlinks and attribute blocks alone need "
		       "%llu blocks, the file system has %llu", shown(a->srcdir), shown(a->image),
		       (unsigned long long)need.min_blocks,
		       (unsigned long long)(layout->free_blocks - 1));
		exit(EXIT_SOURCE);
	}
}

static void print_layout(const struct sufs_super *sb, const char *image, int dry_run)
{
	uint64_t off;
	unsigned n;
	int i, col;

	printf("%s sufs file system on %s\n", dry_run ? "Would create a" : "Creating a",
	       shown(image));
	printf("Block size:          %u\n", sb->block_size);
	printf("Blocks:              %llu (", (unsigned long long)sb->blocks_count);
	print_bytes(sb->blocks_count * sb->block_size);
	printf(")\n");
	printf("Inodes:              %u\n", sb->inodes_count);
	printf("Groups:              %u\n", sb->groups_count);
	printf("Blocks per group:    %u\n", sb->blocks_per_group);
	printf("Inodes per group:    %u\n", sb->inodes_per_group);
	col = printf("Superblock backups:  ");
	for (n = 0; sufs_backup_offset(sb, n, &off) == 0; n++) {
		char num[24];
		int len = snprintf(num, sizeof(num), "%llu", (unsigned long long)(off / sb->block_size));
		if (n == 0) {
			col += printf("at blocks %s", num);
		} else if (col + 2 + len > 78) {
			printf(",\n%21s", "");
			col = 21 + printf("%s", num);
		} else {
			col += printf(", %s", num);
		}
	}
	printf("%s\n", n ? "" : "none");
	printf("UUID:                ");
	for (i = 0; i < 16; i++)
		printf("%02x%s", sb->uuid[i], (i == 3 || i == 5 || i == 7 || i == 9) ? "-" : "");
	printf("\n");
	printf("Label:               ");
	if (sb->label[0])
		print_name(stdout, sb->label, strnlen(sb->label, sizeof(sb->label)));
	else
		printf("(none)");
	printf("\n");
}

static void print_count(uint64_t n, const char *one, const char *many, const char *sep)
{
	printf("%llu %s%s", (unsigned long long)n, n == 1 ? one : many, sep);
}

static void print_populate_stats(const struct populate_stats *s, const char *dir)
{
	printf("Copied from %s: ", shown(dir));
	print_count(s->files, "regular file", "regular files", ", ");
	print_count(s->dirs, "directory", "directories", ", ");
	print_count(s->symlinks, "symlink", "symlinks", ", ");
	print_count(s->hardlinks, "hard link", "hard links", ", ");
	print_count(s->specials, "special file", "special files", " (");
	print_bytes(s->bytes);
	printf(" of data)\n");
	if (s->skipped)
		printf("Skipped %llu %s (see the warnings above)\n", (unsigned long long)s->skipped,
		       s->skipped == 1 ? "entry" : "entries");
}

/* ---- writing --------------------------------------------------------------------- */

/* A failure after the target was opened: leave nothing behind that a
 * reader could take for a file system, and no file we made ourselves. */
static void give_up(const struct args *a, const struct target *t, int status)
{
	const char *made = t->made ? t->made : a->image;

	if (!t->exists && unlink(made) && errno != ENOENT)
		warnmsg("cannot remove %s: %s", shown(made), strerror(errno));
	exit(status);
}

#define WIPE_BYTES (1u << 20)

/* Zero the superblock-sized place of a backup of group g in the geometry
 * (bs, bpg), when it lies on the device; 1 past its end. */
static int wipe_backup(struct sufs_dev *dev, uint64_t size, uint32_t bs, uint32_t bpg,
		       uint32_t g, int *rc)
{
	uint64_t off = (uint64_t)g * bpg * bs;

	if (off > size || size - off < SUFS_SB_SIZE)
		return 1;
	*rc = sufs_dev_zero(dev, off, SUFS_SB_SIZE);
	return 0;
}

/*
 * Clearing a whole device could take long: clear where other signatures
 * live (boot sector, partition tables, RAID and file-system superblocks at
 * either end), so that no probe finds them beside the new file system;
 * and where fsck.sufs would look for a backup superblock when the new
 * primary is damaged, so that it cannot take one of a file system that
 * was there before for the new one: every backup of the old file system
 * its primary superblock describes, and the backups of every block size's
 * default group size, over the WHOLE device (SIZE may ask for less of it).
 */
static int wipe_device(struct sufs_dev *dev, uint64_t size, uint64_t whole)
{
	uint64_t n = size < 2 * WIPE_BYTES ? size : WIPE_BYTES;
	uint8_t raw[SUFS_SB_SIZE];
	struct sufs_super old;
	uint32_t bs, g;
	int rc = 0;

	if (size >= SUFS_SB_OFFSET + SUFS_SB_SIZE &&
	    (rc = sufs_dev_read(dev, SUFS_SB_OFFSET, raw, sizeof(raw))) == 0) {
		sufs_super_decode(raw, &old);
		if (old.magic == SUFS_MAGIC && !sufs_super_check(&old, 0, NULL))
			for (g = 1; g && g < old.groups_count && !rc; g++)
				if (sufs_group_has_backup(g) &&
				    wipe_backup(dev, whole, old.block_size, old.blocks_per_group, g, &rc))
					break;
	}
	for (bs = SUFS_MIN_BLOCK_SIZE; bs <= SUFS_MAX_BLOCK_SIZE && !rc; bs *= 2)
		for (g = 1; g && !rc; g++)
			if (sufs_group_has_backup(g) && wipe_backup(dev, whole, bs, 8 * bs, g, &rc))
				break;
	if (!rc)
		rc = sufs_dev_zero(dev, 0, n);
	if (!rc && size > n)
		rc = sufs_dev_zero(dev, size - n, n);
	return rc;
}

/* Step 6: open the target, give a file its size and clear what it held. */
static struct sufs_dev *open_target(const struct args *a, struct target *t)
{
	struct sufs_dev *dev;
	unsigned flags = SUFS_DEV_RDWR;
	uint64_t whole;
	int rc;

	if (!t->exists)
		flags |= SUFS_DEV_CREATE;
	if (t->is_blockdev)
		flags |= SUFS_DEV_EXCL;
	rc = sufs_dev_open(a->image, flags, &dev);
	if (rc) {
		errmsg("cannot open %s for writing: %s", shown(a->image), sufs_strerror(rc));
		exit(EXIT_TARGET);
	}
	/* a failure removes what we created: through a dangling symlink,
	 * the file it names, not the symlink */
	if (!t->exists)
		t->made = realpath(a->image, NULL);
	if (t->is_blockdev) {
		/* SIZE may ask for less than the whole device: the device's size
		 * is what sufs_mkfs() lays the file system out over. */
		whole = dev->size;
		dev->size = a->size;
		rc = wipe_device(dev, a->size, whole);
		if (rc) {
			errmsg("cannot clear %s: %s", shown(a->image), sufs_strerror(rc));
			sufs_dev_close(dev);
			give_up(a, t, EXIT_IO);
		}
		return dev;
	}
	/* The size first: ftruncate() fails or succeeds whole, so a target
	 * that cannot take the size is left as it was. */
	if (dev->size != a->size) {
		rc = sufs_dev_resize(dev, a->size);
		if (rc) {
			errmsg("cannot set the size of %s to %llu bytes: %s", shown(a->image),
			       (unsigned long long)a->size, sufs_strerror(rc));
			sufs_dev_close(dev);
			give_up(a, t, EXIT_TARGET);
		}
	}
	/* Then the old contents go, so that free blocks hold zeros and the
	 * image depends on nothing but the inputs. */
	if (t->old_size) {
		rc = sufs_dev_zero(dev, 0, t->old_size < a->size ? t->old_size : a->size);
		if (rc) {
			errmsg("cannot clear %s: %s", shown(a->image), sufs_strerror(rc));
			sufs_dev_close(dev);
			give_up(a, t, EXIT_IO);
		}
	}
	return dev;
}

int main(int argc, char **argv)
{
	struct args a;
	struct target t;
	struct sufs_super layout;
	struct sufs_dev *dev;
	struct sufs_fs *fs;
	struct populate_opts po;
	struct populate_stats ps;
	struct stat st;
	int rc;

	prog_init("mkfs.sufs", argv);
	parse_args(argc, argv, &a);
	if (a.srcdir)
		check_source(a.srcdir);
	examine_target(&a, &t);

	rc = sufs_mkfs_layout(a.size, &a.mo, &layout);
	if (rc) {
		if (rc != -SUFS_EGEOMETRY || (!explain_inodes(&a) && !explain_geometry(&a)))
			errmsg("cannot lay out a file system of %llu bytes on %s: %s",
			       (unsigned long long)a.size, shown(a.image), sufs_strerror(rc));
		exit(EXIT_LAYOUT);
	}
	probe_target(&a, &t);
	if (a.srcdir) {
		memset(&po, 0, sizeof(po));
		po.progress = !a.quiet;
		po.keep_root_owner = a.root_owner_set;
		po.clamp = a.mo.fixed_time;
		po.clamp_sec = a.mo.time_sec;
		/* The image may lie inside the tree (mkfs.sufs -d . img): skip it. */
		if (stat(a.image, &st) == 0) {
			po.skip_set = 1;
			po.skip_dev = st.st_dev;
			po.skip_ino = st.st_ino;
		}
		check_fits(&a, &po, &layout);
	}
	if (a.dry_run) {
		check_writable(&a, &t);
		if (!a.quiet)
			print_layout(&layout, a.image, 1);
		return EXIT_OK;
	}

	dev = open_target(&a, &t);
	rc = sufs_mkfs(dev, &a.mo, &fs);
	if (rc) {
		errmsg("cannot make a file system on %s: %s", shown(a.image), sufs_strerror(rc));
		sufs_dev_close(dev);
		give_up(&a, &t, rc == -SUFS_EGEOMETRY ? EXIT_LAYOUT : EXIT_IO);
	}
	/* mkfs streams: a small cache keeps its memory low at no cost in time */
	sufs_set_cache_size(fs, MKFS_CACHE_BYTES);
	if (!a.quiet) {
		print_layout(sufs_get_super(fs), a.image, 0);
		fflush(stdout);
	}

	if (a.srcdir) {
		/* An image made now inside the tree (it did not exist when
		 * counting): skip it too. */
		if (!po.skip_set && stat(a.image, &st) == 0) {
			po.skip_set = 1;
			po.skip_dev = st.st_dev;
			po.skip_ino = st.st_ino;
		}
		rc = populate(fs, a.srcdir, &po, &ps);
		if (rc) {
			/* the image's fault (the host's file system full) or the source's */
			int status = dev->write_error ? EXIT_IO : EXIT_SOURCE;
			errmsg("%s: no file system made", shown(a.image));
			sufs_abandon(fs);
			give_up(&a, &t, status);
		}
	}

	rc = sufs_close(fs);
	if (rc) {
		errmsg("cannot write %s: %s", shown(a.image), sufs_strerror(rc));
		give_up(&a, &t, EXIT_IO);
	}
	if (!a.quiet && a.srcdir)
		print_populate_stats(&ps, a.srcdir);
	free(t.made);
	return EXIT_OK;
}
