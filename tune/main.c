/*
 * sufs-tune - change what a sufs file system is called and how it is
 * written, as tune2fs does for ext2: its label, its UUID, its default
 * write mode, and the features that may be turned on.
 *
 * These live in the superblock: in the primary and in every backup, which
 * holds the fields that describe the file system (man/sufs.5, Backup
 * superblocks).  No library call changes them, so this program edits the
 * superblocks itself, through the device: it opens the image for writing,
 * which takes the image writers' lock (libsufs/dev/dev.c), so that no
 * other program has it open for writing meanwhile, and one that opens it
 * later sees the change.  The primary is checked as the library checks it
 * before anything is written; each backup gets the same fields changed
 * and keeps the others; the primary goes last.  Nothing else of the image
 * is read or written.
 */
#include "config.h"

#include <sufs.h>

#include "ctl.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * The features sufs-tune may turn on: those an image can take without
 * being rewritten, each a row with its superblock word and bit.  xattr:
 * an image without it has its inodes' attribute bytes zero (man/sufs.5),
 * which is an inode with no attributes.
 */
struct feature {
	const char *name;
	uint32_t *(*word)(struct sufs_super *sb);
	uint32_t bit;
};
static uint32_t *ro_compat(struct sufs_super *sb)
{
	return &sb->features_ro_compat;
}

static const struct feature features[] = {
	{ "xattr", ro_compat, SUFS_FEATURE_RO_XATTR },
	{ NULL, NULL, 0 },
};

struct change {
	const char *label;         /* -L */
	int have_uuid;             /* -U */
	uint8_t uuid[16];
	int have_mode;             /* -o */
	unsigned mode;
	const struct feature *on[8]; /* -O */
	size_t non;
	int list;                  /* -l */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-L LABEL] [-U UUID] [-o MODE] [-O FEATURE[,...]] [-l] IMAGE\n"
		"Change the label, UUID, default write mode or features of a sufs file system.\n"
		"\n"
		"  -L LABEL        the volume label, at most 63 bytes (\"\" removes it)\n"
		"  -U UUID         the UUID: 8-4-4-4-12 hex digits, random, time or clear\n"
		"  -o MODE         the default write mode: softdep, sync or async\n"
		"  -O FEATURE,...  turn features on (xattr)\n"
		"  -l              print the label, UUID, default write mode and features\n"
		"      --help      print this help and exit\n"
		"  -V, --version   print the version and exit\n"
		"\n"
		"Exit status: 0 done, 1 usage error, 2 the image cannot be used, 16 writing\n"
		"the image failed.  See sufs-tune(8).\n",
		prog);
}

static void usage_error(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	exit(EXIT_USAGE);
}

/* -O: names separated by commas, each a row of features[]. */
static void parse_features(struct change *c, const char *arg)
{
	char *copy = strdup(arg), *name, *save = NULL;
	const struct feature *f;

	if (!copy) {
		errmsg("%s", strerror(ENOMEM));
		exit(EXIT_USAGE);
	}
	for (name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		for (f = features; f->name && strcmp(f->name, name); f++)
			;
		if (!f->name) {
			errmsg("-O %s: no such feature that can be turned on (xattr can)",
			       shown(name));
			free(copy);
			usage_error();
		}
		if (c->non == sizeof(c->on) / sizeof(c->on[0])) {
			errmsg("-O: too many features at once");
			free(copy);
			usage_error();
		}
		c->on[c->non++] = f;
	}
	free(copy);
}

static const char *parse_args(int argc, char **argv, struct change *c)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *why;
	int opt;

	memset(c, 0, sizeof(*c));
	while ((opt = getopt_long(argc, argv, "L:U:o:O:lV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'L':
			if (strlen(optarg) > sizeof(((struct sufs_super *)0)->label) - 1) {
				errmsg("label '%s' is too long: %zu bytes, at most 63", shown(optarg),
				       strlen(optarg));
				usage_error();
			}
			c->label = optarg;
			break;
		case 'U':
			if (uuid_arg(optarg, c->uuid, &why)) {
				errmsg("-U %s: %s", shown(optarg), why);
				usage_error();
			}
			c->have_uuid = 1;
			break;
		case 'o':
			if (sufs_mode_parse(optarg, &c->mode)) {
				errmsg("-o %s: not a write mode (softdep, sync or async)",
				       shown(optarg));
				usage_error();
			}
			c->have_mode = 1;
			break;
		case 'O':
			parse_features(c, optarg);
			break;
		case 'l':
			c->list = 1;
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
	if (optind == argc) {
		errmsg("no IMAGE given");
		usage_error();
	}
	if (argc - optind > 1) {
		errmsg("too many arguments: '%s'", shown(argv[optind + 1]));
		usage_error();
	}
	if (!c->label && !c->have_uuid && !c->have_mode && !c->non && !c->list) {
		errmsg("nothing to do: give -L, -U, -o, -O or -l");
		usage_error();
	}
	return argv[optind];
}

static int changes(const struct change *c)
{
	return c->label || c->have_uuid || c->have_mode || c->non;
}

/* The fields that describe the file system, in one copy of the superblock. */
static void apply(const struct change *c, struct sufs_super *sb)
{
	size_t i;

	if (c->label) {
		memset(sb->label, 0, sizeof(sb->label));
		memcpy(sb->label, c->label, strlen(c->label));
	}
	if (c->have_uuid)
		memcpy(sb->uuid, c->uuid, sizeof(sb->uuid));
	if (c->have_mode)
		sb->default_mode = c->mode;
	for (i = 0; i < c->non; i++)
		*c->on[i]->word(sb) |= c->on[i]->bit;
}

/*
 * The primary superblock, read and checked as the library checks it when
 * it opens an image: 0, or EXIT_IMAGE after a message.
 */
static int read_primary(struct sufs_dev *dev, const char *image, struct sufs_super *sb)
{
	uint8_t raw[SUFS_SB_SIZE];
	const char *why = NULL;
	int rc = dev->size < SUFS_SB_OFFSET + SUFS_SB_SIZE ? -SUFS_ESHORT
			     : sufs_dev_read(dev, SUFS_SB_OFFSET, raw, sizeof(raw));

	if (!rc) {
		sufs_super_decode(raw, sb);
		if (sb->magic != SUFS_MAGIC)
			rc = -SUFS_EMAGIC;
		else if (sb->checksum != sufs_super_csum(raw))
			rc = -SUFS_ECHECKSUM;
		else
			rc = sufs_super_check(sb, dev->is_blockdev && !dev->size ? 0 : dev->size,
					      &why);
	}
	if (!rc)
		return 0;
	errmsg("%s: %s%s%s%s", shown(image), sufs_strerror(rc), why ? " (superblock field " : "",
	       why ? why : "", why ? ")" : "");
	if (rc == -SUFS_ECHECKSUM || rc == -SUFS_ECORRUPT)
		errmsg("%s: fsck.sufs repairs the superblock first", shown(image));
	return EXIT_IMAGE;
}

/* Each backup as it is, with the change made: 0, or an error (said). */
static int write_backups(struct sufs_dev *dev, const char *image, const struct sufs_super *sb,
			 const struct change *c)
{
	uint8_t raw[SUFS_SB_SIZE];
	struct sufs_super b;
	uint64_t off;
	unsigned n;
	int rc;

	for (n = 0; sufs_backup_offset(sb, n, &off) == 0; n++) {
		rc = sufs_dev_read(dev, off, raw, sizeof(raw));
		if (rc) {
			errmsg("%s: reading the backup superblock at block %llu: %s", shown(image),
			       (unsigned long long)(off / sb->block_size), sufs_strerror(rc));
			return rc;
		}
		sufs_super_decode(raw, &b);
		if (b.magic != SUFS_MAGIC || b.checksum != sufs_super_csum(raw) ||
		    (uint64_t)b.sb_group * sb->blocks_per_group * sb->block_size != off) {
			/* what is not a backup is not made one here: fsck.sufs's work */
			warnmsg("%s: the backup superblock at block %llu is damaged, and left as "
				"it is", shown(image), (unsigned long long)(off / sb->block_size));
			continue;
		}
		apply(c, &b);
		sufs_super_encode(&b, raw);
		rc = sufs_dev_write(dev, off, raw, sizeof(raw));
		if (rc) {
			errmsg("%s: writing the backup superblock at block %llu: %s", shown(image),
			       (unsigned long long)(off / sb->block_size), sufs_strerror(rc));
			return rc;
		}
	}
	return 0;
}

static void list(const struct sufs_super *sb)
{
	char uuid[37];

	printf("%-26s", "Filesystem volume name:");
	if (sb->label[0])
		print_name(stdout, sb->label, strnlen(sb->label, sizeof(sb->label)));
	else
		printf("<none>");
	uuid_format(sb->uuid, uuid);
	printf("\n%-26s%s\n", "Filesystem UUID:", uuid);
	printf("%-26s%s\n", "Default write mode:", sufs_mode_name(sb->default_mode));
	printf("%-26s", "Filesystem features:");
	if (sb->features_compat || sb->features_incompat || sb->features_ro_compat)
		printf("compat 0x%x, incompat 0x%x, ro_compat 0x%x\n", sb->features_compat,
		       sb->features_incompat, sb->features_ro_compat);
	else
		printf("(none)\n");
}

int main(int argc, char **argv)
{
	struct change c;
	struct sufs_super sb;
	struct sufs_dev *dev;
	uint8_t raw[SUFS_SB_SIZE];
	const char *image;
	int64_t now;
	int rc, status, fixed;

	prog_init("sufs-tune", argv);
	image = parse_args(argc, argv, &c);
	fixed = source_date_epoch(&now);
	if (fixed < 0)
		return EXIT_USAGE;
	/* for writing: the writers' lock is taken, or another writer named
	 * (a sufs-fuse daemon too); only to list: what is read may be old */
	if (!changes(&c))
		ctl_warn_if_live(image);
	rc = sufs_dev_open(image, changes(&c) ? SUFS_DEV_RDWR : 0, &dev);
	if (rc) {
		errmsg("cannot open %s: %s", shown(image), open_error(image, rc));
		return EXIT_IMAGE;
	}
	status = read_primary(dev, image, &sb);
	if (status || !changes(&c)) {
		if (!status && c.list)
			list(&sb);
		sufs_dev_close(dev);
		return status;
	}
	/* the backups first: a crash between leaves the primary as it was,
	 * which is what a check goes by */
	rc = write_backups(dev, image, &sb, &c);
	if (!rc)
		rc = sufs_dev_barrier(dev);
	if (!rc) {
		apply(&c, &sb);
		sb.write_time = fixed ? now : (int64_t)time(NULL);
		sufs_super_encode(&sb, raw);
		rc = sufs_dev_write(dev, SUFS_SB_OFFSET, raw, sizeof(raw));
		if (!rc)
			rc = sufs_dev_barrier(dev);
		if (rc)
			errmsg("%s: writing the superblock: %s", shown(image), sufs_strerror(rc));
	}
	sufs_dev_close(dev);
	if (rc)
		return EXIT_IO;
	if (c.list)
		list(&sb);
	if (fflush(stdout) || ferror(stdout)) {
		errmsg("writing the output: %s", strerror(errno));
		return EXIT_FILE;
	}
	return EXIT_OK;
}
