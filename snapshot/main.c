/*
 * sufs-snap - take, list, show, delete and export the snapshots of a sufs
 * image.
 *
 * The snapshots themselves are libsufs's (snap.c): this program checks the
 * command line, opens the image (for writing only to create or delete),
 * makes the one library call and reports.  Its own work is export: the
 * snapshot's view, opened as a device, is copied block by block into a
 * new sparse image, only the blocks the view has in use, written to a
 * temporary file beside the output and renamed into place once complete
 * and durable, so that an export that fails leaves no image behind.
 *
 * Exit status (common/util.h's scheme): 0 done; 1 usage (the command line,
 * a name that cannot be a snapshot's); 2 the image cannot be opened; 3 the
 * snapshot named does not exist (info, delete, export) or already does
 * (create); 4 the operation failed; 8 the output of export cannot be
 * written; 16 the image could not be written back.  On a mounted image
 * the daemon's answers map to the same codes.
 */
#include "config.h"

#include <sufs.h>

#include "ctl.h"
#include "remote.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Exit statuses (common/util.h; man/sufs-snap.8, EXIT STATUS), by what
 * they mean to sufs-snap. */
enum {
	EXIT_FAIL = EXIT_FAILED,   /* the operation failed */
	EXIT_NAME = EXIT_NOTFOUND, /* no snapshot of that name (or, to create, one is) */
};

struct opts {
	int json, quiet, force;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s create IMAGE NAME\n"
		"       %s list [--json] IMAGE\n"
		"       %s info [--json] IMAGE NAME\n"
		"       %s delete IMAGE NAME\n"
		"       %s export [-f] [-q] IMAGE NAME OUT\n"
		"Take, list, show, delete and export the snapshots of a sufs file system.\n"
		"\n"
		"  create   take a snapshot of IMAGE's present state, named NAME\n"
		"  list     the snapshots, oldest first: name, time taken, blocks held\n"
		"  info     one snapshot, and the file system as it sees it\n"
		"  delete   delete a snapshot, freeing the blocks only it holds\n"
		"  export   write the snapshot's state as a standalone sparse image OUT\n"
		"\n"
		"      --json         (list, info) JSON on standard output\n"
		"  -f, --force        (export) replace OUT if it exists\n"
		"  -q, --quiet        (export) no progress bar\n"
		"      --help         show this help and exit\n"
		"  -V, --version      show the version and exit\n"
		"\n"
		"Exit status: 0 done, 1 usage error, 2 the image cannot be opened, 3 no snapshot\n"
		"of that name (or, for create, one exists already), 4 the operation failed,\n"
		"8 the output cannot be written, 16 the image cannot be written back.\n"
		"See sufs-snap(8).\n",
		prog, prog, prog, prog, prog);
}

/* ---- output helpers -------------------------------------------------------- */

/* Names from the image go out with print_name()'s escapes (common/util.h). */
#define ESCAPED_MAX (4 * SUFS_NAME_MAX + 1)

/* Seconds since the epoch as ISO 8601 in UTC: "2025-01-01T00:00:00Z". */
static void iso_time(int64_t sec, char *out, size_t size)
{
	time_t t = (time_t)sec;
	struct tm tm;

	if ((int64_t)t != sec || !gmtime_r(&t, &tm) ||
	    !strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, size, "%" PRId64, sec);
}

/* The members every snapshot has in JSON, without the braces. */
static void json_snap(const struct sufs_snap_info *s)
{
	char when[64];

	iso_time(s->time, when, sizeof(when));
	fputs("\"name\": ", stdout);
	json_str(stdout, s->name, strlen(s->name));
	printf(", \"slot\": %u, \"inode\": %" PRIu32 ", \"time\": \"%s\", \"timestamp\": %" PRId64
	       ", \"blocks\": %" PRIu64 ", \"broken\": %s",
	       s->slot, s->ino, when, s->time, s->blocks, s->broken ? "true" : "false");
}

/* ---- names and images ------------------------------------------------------ */

/* A snapshot name is one path component: /.snap/NAME.  0, or -1 after the
 * message. */
static int check_name(const char *name)
{
	const char *why = NULL;

	if (!*name)
		why = "is empty";
	else if (strchr(name, '/'))
		why = "contains '/'";
	else if (!strcmp(name, ".") || !strcmp(name, ".."))
		why = "is '.' or '..'";
	else if (strlen(name) > SUFS_NAME_MAX)
		why = "is longer than 255 bytes";
	if (!why)
		return 0;
	if (strlen(name) > SUFS_NAME_MAX) {
		errmsg("bad snapshot name: it %s", why);
	} else {
		char esc[ESCAPED_MAX];
		escape_name_into(name, strlen(name), esc);
		errmsg("bad snapshot name \"%s\": it %s", esc, why);
	}
	return -1;
}

/* Open the image; 0, or the exit status after the message. */
static int open_snap_image(const char *image, unsigned flags, struct sufs_fs **fs)
{
	int rc = sufs_open(image, flags, fs);

	if (rc) {
		errmsg("%s: %s", shown(image), open_error(image, rc));
		return EXIT_IMAGE;
	}
	return EXIT_OK;
}

/* Close the image; the status, made EXIT_IO if closing fails. */
static int close_image(const char *image, struct sufs_fs *fs, int status)
{
	int rc = sufs_close(fs);

	if (rc) {
		errmsg("%s: closing: %s", shown(image), sufs_strerror(rc));
		return EXIT_IO;
	}
	return status;
}

/* Is rc what damaged metadata gives? */
static int damage(int rc)
{
	return rc == -SUFS_ECORRUPT || rc == -SUFS_ECHECKSUM || rc == -SUFS_EMAGIC ||
	       rc == -SUFS_EVERSION;
}

/* What was being done to the snapshot when a call failed. */
enum snap_act { ACT_CREATE, ACT_DELETE, ACT_READ, ACT_VIEW };

/* The message and exit status for a failed call naming a snapshot.  Damage
 * found reading a snapshot or its view is in the snapshot's own copies: it
 * can still be deleted.  Damage found creating or deleting one is in the
 * file system: fsck.sufs's to repair. */
static int snap_error(const char *image, const char *name, enum snap_act act, int rc)
{
	static const char *const what[] = {
		[ACT_CREATE] = "creating", [ACT_DELETE] = "deleting",
		[ACT_READ] = "reading", [ACT_VIEW] = "opening the view of",
	};
	char esc[ESCAPED_MAX];
	int view = act == ACT_READ || act == ACT_VIEW;

	escape_name_into(name, strlen(name), esc);
	if (rc == -SUFS_ENOTSNAP) {
		errmsg("%s: no snapshot named \"%s\"", shown(image), esc);
		return EXIT_NAME;
	}
	errmsg("%s: %s snapshot \"%s\": %s%s", shown(image), what[act], esc, sufs_strerror(rc),
	       !damage(rc) ? "" :
	       view ? "; the snapshot is damaged: it can only be deleted" :
		      "; fsck.sufs -f repairs it");
	return EXIT_FAIL;
}

/* ---- the commands ---------------------------------------------------------- */

/* Whether /.snap/NAME is a snapshot file with no slot: what a crash in the
 * middle of a create leaves, and what delete removes. */
static int leftover(struct sufs_fs *fs, const char *name)
{
	struct sufs_inode in;
	uint32_t dir, ino;

	return sufs_lookup(fs, SUFS_ROOT_INO, ".snap", 5, &dir) == 0 &&
	       sufs_lookup(fs, dir, name, strlen(name), &ino) == 0 &&
	       sufs_inode_get(fs, ino, &in) == 0 && (in.flags & SUFS_IFLAG_SNAPSHOT);
}

/* The message for a snapshot that lost a copy it needed; EXIT_FAIL. */
static int broken_error(const char *image, const char *name)
{
	char esc[ESCAPED_MAX];

	escape_name_into(name, strlen(name), esc);
	errmsg("%s: snapshot \"%s\" is broken (a copy could not be made for lack of "
	       "room): it can only be deleted", shown(image), esc);
	return EXIT_FAIL;
}

/* What a name that create found taken is: "snapshot", "leftover" (left by
 * a create that did not finish) or "other". */
static const char *taken_by(struct sufs_fs *fs, const char *name)
{
	struct sufs_snap_info info;

	if (sufs_snap_find(fs, name, &info) == 0)
		return "snapshot";
	return leftover(fs, name) ? "leftover" : "other";
}

/* The message and status for create's return code. */
static int create_status(const char *image, const char *name, int rc, const char *taken)
{
	char esc[ESCAPED_MAX];
	int status = EXIT_OK;

	escape_name_into(name, strlen(name), esc);
	if (rc == -EEXIST && !strcmp(taken, "snapshot")) {
		errmsg("%s: a snapshot named \"%s\" exists already", shown(image), esc);
		status = EXIT_NAME;
	} else if (rc == -EEXIST && !strcmp(taken, "leftover")) {
		errmsg("%s: /.snap/%s is left from a create that did not finish: "
		       "remove it with sufs-snap delete", shown(image), esc);
		status = EXIT_NAME;
	} else if (rc == -EEXIST) {
		errmsg("%s: /.snap/%s exists and is not a snapshot", shown(image), esc);
		status = EXIT_NAME;
	} else if (rc == -SUFS_ENOSLOT) {
		errmsg("%s: all %u snapshot slots are taken: delete a snapshot first", shown(image),
		       SUFS_SNAP_SLOTS);
		status = EXIT_FAIL;
	} else if (rc == -ENOSPC) {
		errmsg("%s: no space left for snapshot \"%s\"", shown(image), esc);
		status = EXIT_FAIL;
	} else if (rc) {
		status = snap_error(image, name, ACT_CREATE, rc);
	}
	return status;
}

static int cmd_create(const char *image, const char *name)
{
	struct sufs_fs *fs;
	struct sufs_snap_info info;
	struct ctl c;
	char taken[16] = "";
	int rc, status;

	if (check_name(name))
		return EXIT_USAGE;
	if (ctl_connect(image, &c) == 0) {
		/* mounted: its daemon takes the snapshot */
		rc = remote_create(&c, name, &info, taken, sizeof(taken));
		return create_status(image, name, rc, taken);
	}
	status = open_snap_image(image, SUFS_OPEN_RDWR, &fs);
	if (status)
		return status;
	rc = sufs_snap_create(fs, name, &info);
	if (rc == -EEXIST)
		snprintf(taken, sizeof(taken), "%s", taken_by(fs, name));
	return close_image(image, fs, create_status(image, name, rc, taken));
}

static void print_list(const struct sufs_snap_info *s, unsigned n, const struct opts *o)
{
	char esc[SUFS_SNAP_SLOTS][ESCAPED_MAX], when[64];
	unsigned i;
	int width = 4;

	if (o->json) {
		printf("[");
		for (i = 0; i < n; i++) {
			printf("%s\n  {", i ? "," : "");
			json_snap(&s[i]);
			printf("}");
		}
		printf("%s]\n", n ? "\n" : "");
		return;
	}
	for (i = 0; i < n; i++) {
		escape_name_into(s[i].name, strlen(s[i].name), esc[i]);
		if ((int)strlen(esc[i]) > width)
			width = (int)strlen(esc[i]);
	}
	if (n)
		printf("%-*s  %-20s  %12s  %s\n", width, "NAME", "TAKEN", "BLOCKS", "STATE");
	for (i = 0; i < n; i++) {
		iso_time(s[i].time, when, sizeof(when));
		printf("%-*s  %-20s  %12" PRIu64 "  %s\n", width, esc[i], when, s[i].blocks,
		       s[i].broken ? "broken" : "ok");
	}
}

static int cmd_list(const char *image, const struct opts *o)
{
	struct sufs_fs *fs;
	struct sufs_snap_info s[SUFS_SNAP_SLOTS];
	struct ctl c;
	unsigned n;
	int rc, status;

	if (ctl_connect(image, &c) == 0) {
		rc = remote_list(&c, s, &n);
		if (rc) {
			errmsg("%s: listing the snapshots: %s", shown(image), sufs_strerror(rc));
			return EXIT_FAIL;
		}
		print_list(s, n, o);
		return EXIT_OK;
	}
	status = open_snap_image(image, 0, &fs);
	if (status)
		return status;
	rc = sufs_snap_list(fs, s, &n);
	if (rc) {
		errmsg("%s: listing the snapshots: %s", shown(image), sufs_strerror(rc));
		return close_image(image, fs, EXIT_FAIL);
	}
	print_list(s, n, o);
	return close_image(image, fs, EXIT_OK);
}

/* One snapshot; vsb, the superblock of its view, is NULL for a broken one. */
static void print_info(const struct sufs_snap_info *s, const struct sufs_super *vsb,
		       const struct opts *o)
{
	char esc[ESCAPED_MAX], when[64];
	uint64_t bused = vsb ? vsb->blocks_count - vsb->free_blocks : 0;
	uint32_t iused = vsb ? vsb->inodes_count - vsb->free_inodes : 0;

	iso_time(s->time, when, sizeof(when));
	if (o->json) {
		printf("{");
		json_snap(s);
		if (vsb)
			printf(", \"view\": {\"block_size\": %" PRIu32 ", \"blocks_count\": %" PRIu64
			       ", \"blocks_used\": %" PRIu64 ", \"free_blocks\": %" PRIu64
			       ", \"inodes_count\": %" PRIu32 ", \"inodes_used\": %" PRIu32
			       ", \"free_inodes\": %" PRIu32 "}",
			       vsb->block_size, vsb->blocks_count, bused, vsb->free_blocks,
			       vsb->inodes_count, iused, vsb->free_inodes);
		else
			printf(", \"view\": null");
		printf("}\n");
		return;
	}
	escape_name_into(s->name, strlen(s->name), esc);
	printf("Name:           %s\n", esc);
	printf("Slot:           %u\n", s->slot);
	printf("Inode:          %" PRIu32 " (/.snap/%s)\n", s->ino, esc);
	printf("Taken:          %s\n", when);
	printf("Blocks held:    %" PRIu64 "\n", s->blocks);
	if (!vsb) {
		printf("State:          broken (a copy could not be made for lack of room):\n"
		       "                it no longer shows the file system as it was;\n"
		       "                it can only be deleted\n");
		return;
	}
	printf("State:          ok\n");
	printf("As the snapshot sees the file system:\n");
	printf("  Block size:   %" PRIu32 "\n", vsb->block_size);
	printf("  Blocks used:  %" PRIu64 " of %" PRIu64 "\n", bused, vsb->blocks_count);
	printf("  Inodes used:  %" PRIu32 " of %" PRIu32 "\n", iused, vsb->inodes_count);
}

static int cmd_info(const char *image, const char *name, const struct opts *o)
{
	struct sufs_fs *fs, *vfs = NULL;
	struct sufs_dev *view = NULL;
	struct sufs_snap_info s;
	char esc[ESCAPED_MAX];
	int rc, status;

	if (check_name(name))
		return EXIT_USAGE;
	ctl_warn_if_live(image);
	status = open_snap_image(image, 0, &fs);
	if (status)
		return status;
	rc = sufs_snap_find(fs, name, &s);
	if (!rc && s.broken) {
		print_info(&s, NULL, o);
		return close_image(image, fs, EXIT_OK);
	}
	if (!rc)
		rc = sufs_snap_open_dev(fs, name, &view);
	if (rc)
		return close_image(image, fs, snap_error(image, name, ACT_READ, rc));
	rc = sufs_open_dev(view, 0, 0, &vfs);
	if (rc) {
		sufs_dev_close(view);
		return close_image(image, fs, snap_error(image, name, ACT_VIEW, rc));
	}
	/* what it shows are counts: ones that cannot be are damage */
	rc = sufs_super_check_counts(sufs_get_super(vfs), NULL);
	if (rc) {
		sufs_close(vfs);
		return close_image(image, fs, snap_error(image, name, ACT_VIEW, rc));
	}
	print_info(&s, sufs_get_super(vfs), o);
	rc = sufs_close(vfs); /* closes the view too */
	if (rc) {
		escape_name_into(name, strlen(name), esc);
		errmsg("%s: closing the view of \"%s\": %s", shown(image), esc, sufs_strerror(rc));
		status = EXIT_FAIL;
	}
	return close_image(image, fs, status);
}

static int cmd_delete(const char *image, const char *name)
{
	struct sufs_fs *fs;
	struct ctl c;
	int rc, status;

	if (check_name(name))
		return EXIT_USAGE;
	if (ctl_connect(image, &c) == 0) {
		rc = remote_delete(&c, name);
		return rc ? snap_error(image, name, ACT_DELETE, rc) : EXIT_OK;
	}
	status = open_snap_image(image, SUFS_OPEN_RDWR, &fs);
	if (status)
		return status;
	rc = sufs_snap_delete(fs, name);
	if (rc)
		status = snap_error(image, name, ACT_DELETE, rc);
	return close_image(image, fs, status);
}

/* ---- export ---------------------------------------------------------------- */

struct export {
	const char *image, *name, *out;
	struct sufs_dev *view;
	uint32_t block_size;
	uint64_t blocks;
	struct outfile file;       /* the output, whole or not at all */
	int quiet;
	struct ctl *ctl;           /* a mounted image: its daemon's channel */
	struct progress bar;       /* the daemon's progress */
	int bar_on;
	char where[96];
};

static int all_zero(const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* Whether OUT may be written (outfile.c): EXIT_OK, or the status after
 * the message. */
static int check_output(const char *image, const char *out, int force)
{
	struct stat si;
	const char *why;
	int err = outfile_check(out, stat(image, &si) ? NULL : &si, force, &why);

	if (!err)
		return EXIT_OK;
	errmsg("%s: %s", shown(out), why);
	return EXIT_FILE;
}

/* Copy every block the view has in use; the others stay holes. */
static int copy_blocks(struct export *e, const char **where)
{
	struct progress p;
	uint8_t *buf;
	uint64_t blk;
	int rc = 0, used;

	buf = malloc(e->block_size);
	if (!buf)
		return -ENOMEM;
	if (ftruncate(e->file.fd, (off_t)(e->blocks * e->block_size))) {
		*where = "sizing the output";
		free(buf);
		return -errno;
	}
	if (!e->quiet)
		progress_start(&p, "Exporting", e->blocks);
	for (blk = 0; blk < e->blocks && !rc; blk++) {
		if (interrupted) {
			*where = NULL;
			rc = -EINTR;
			break;
		}
		if (!e->quiet)
			progress_update(&p, blk);
		rc = sufs_snap_block_used(e->view, blk, &used);
		if (rc) {
			*where = "reading the view's bitmap";
			break;
		}
		if (!used)
			continue;
		rc = sufs_dev_read(e->view, blk * e->block_size, buf, e->block_size);
		if (rc) {
			*where = "reading the view";
			break;
		}
		if (all_zero(buf, e->block_size))
			continue;
		if (pwrite(e->file.fd, buf, e->block_size, (off_t)(blk * e->block_size)) !=
		    (ssize_t)e->block_size) {
			rc = errno ? -errno : -EIO;
			*where = "writing the output";
		}
	}
	if (!e->quiet) {
		if (rc)
			progress_stop(&p);
		else
			progress_end(&p);
	}
	free(buf);
	return rc;
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* copy() writes the output's blocks into e->file; the status it says
 * itself (a message made), or 0. */
typedef int (*copy_fn)(struct export *e, const char **where, int *status);

/* The output made by copy() in a temporary file, put in place; the exit
 * status, after the message. */
static int write_output(struct export *e, int force, copy_fn copy)
{
	struct stat st;
	const char *where = NULL;
	char esc[ESCAPED_MAX];
	int rc, status = EXIT_OK;

	catch_signals();
	/* the copy is readable by no more users than the image */
	rc = stat(e->image, &st) ? -errno : outfile_open(&e->file, e->out, st.st_mode);
	if (rc == -EBUSY) {
		errmsg("%s: another program has it open for writing; it is not replaced",
		       shown(e->out));
		return EXIT_FILE;
	}
	if (rc) {
		where = "making a temporary file beside the output";
	} else {
		rc = copy(e, &where, &status);
		if (!rc)
			rc = outfile_commit(&e->file, force, &where);
		else
			outfile_abort(&e->file);
	}
	if (status)
		return status;
	if (rc == -EINTR && interrupted) {
		errmsg("%s: interrupted; nothing was written", shown(e->out));
		return EXIT_FAIL;
	}
	if (rc) {
		escape_name_into(e->name, strlen(e->name), esc);
		errmsg("%s: exporting snapshot \"%s\" of %s: %s%s%s%s", shown(e->out), esc,
		       shown(e->image), sufs_strerror(rc), where ? " (" : "", where ? where : "",
		       where ? ")" : "");
		/* the view's reads are the image's; the rest is the output's */
		return where && !strncmp(where, "reading the view", 16) ? EXIT_IO : EXIT_FILE;
	}
	return EXIT_OK;
}

static int copy_local(struct export *e, const char **where, int *status)
{
	(void)status;
	return copy_blocks(e, where);
}

static int export_local(struct export *e, const struct opts *o)
{
	struct sufs_snap_info info;
	struct sufs_fs *fs, *vfs = NULL;
	const struct sufs_super *vsb;
	int rc, status;

	status = open_snap_image(e->image, 0, &fs);
	if (status)
		return status;
	rc = sufs_snap_find(fs, e->name, &info);
	if (!rc && info.broken)
		return close_image(e->image, fs, broken_error(e->image, e->name));
	if (!rc)
		rc = sufs_snap_open_dev(fs, e->name, &e->view);
	if (rc)
		return close_image(e->image, fs, snap_error(e->image, e->name, ACT_READ, rc));
	rc = sufs_open_dev(e->view, 0, 0, &vfs);
	if (rc) {
		sufs_dev_close(e->view);
		return close_image(e->image, fs, snap_error(e->image, e->name, ACT_VIEW, rc));
	}
	vsb = sufs_get_super(vfs);
	e->block_size = vsb->block_size;
	e->blocks = vsb->blocks_count;
	status = write_output(e, o->force, copy_local);
	rc = sufs_close(vfs); /* closes the view too */
	if (rc) {
		errmsg("%s: closing the view: %s", shown(e->image), sufs_strerror(rc));
		status = EXIT_IO;
	}
	return close_image(e->image, fs, status);
}

static void remote_progress(void *arg, uint64_t done, uint64_t total)
{
	struct export *e = arg;

	if (e->quiet)
		return;
	if (!e->bar_on) {
		progress_start(&e->bar, "Exporting", total);
		e->bar_on = 1;
	}
	progress_update(&e->bar, done);
}

/* The daemon copies the view into our temporary file. */
static int copy_remote(struct export *e, const char **where, int *status)
{
	struct remote_export x = { .progress = remote_progress, .arg = e, .cancel = &interrupted };
	int rc = remote_export(e->ctl, e->name, e->file.fd, &x);

	if (e->bar_on) {
		if (rc)
			progress_stop(&e->bar);
		else
			progress_end(&e->bar);
	}
	if (rc && x.info.broken)
		*status = broken_error(e->image, e->name);
	else if (rc && (!strcmp(x.where, "read") || !strcmp(x.where, "view")))
		*status = snap_error(e->image, e->name, x.where[0] == 'r' ? ACT_READ : ACT_VIEW, rc);
	snprintf(e->where, sizeof(e->where), "%s", x.where);
	*where = e->where[0] ? e->where : NULL;
	return rc;
}

static int cmd_export(const char *image, const char *name, const char *out,
		      const struct opts *o)
{
	struct export e = { .image = image, .name = name, .out = out, .file = { .fd = -1 },
			    .quiet = o->quiet };
	struct ctl c;
	int status;

	if (check_name(name))
		return EXIT_USAGE;
	status = check_output(image, out, o->force);
	if (status)
		return status;
	if (ctl_connect(image, &c) == 0) {
		/* mounted: its daemon reads the view (it is the only writer) */
		e.ctl = &c;
		return write_output(&e, o->force, copy_remote);
	}
	return export_local(&e, o);
}

/* ---- main ------------------------------------------------------------------ */

/* The commands take their arguments (IMAGE [NAME [OUT]]) in args. */
struct command {
	const char *name;
	int nargs;
	const char *args;
	int (*run)(char **args, const struct opts *o);
};

static int run_create(char **args, const struct opts *o)
{
	(void)o;
	return cmd_create(args[0], args[1]);
}

static int run_list(char **args, const struct opts *o)
{
	return cmd_list(args[0], o);
}

static int run_info(char **args, const struct opts *o)
{
	return cmd_info(args[0], args[1], o);
}

static int run_delete(char **args, const struct opts *o)
{
	(void)o;
	return cmd_delete(args[0], args[1]);
}

static int run_export(char **args, const struct opts *o)
{
	return cmd_export(args[0], args[1], args[2], o);
}

static const struct command commands[] = {
	{ "create", 2, "IMAGE NAME", run_create },
	{ "list", 1, "IMAGE", run_list },
	{ "info", 2, "IMAGE NAME", run_info },
	{ "delete", 2, "IMAGE NAME", run_delete },
	{ "export", 3, "IMAGE NAME OUT", run_export },
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'H' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd = NULL;
	struct opts o = { 0 };
	size_t i;
	int c;

	prog_init("sufs-snap", argv);
	while ((c = getopt_long(argc, argv, "fqV", longopts, NULL)) != -1) {
		switch (c) {
		case 'J': o.json = 1; break;
		case 'f': o.force = 1; break;
		case 'q': o.quiet = 1; break;
		case 'H': usage(stdout); return EXIT_OK;
		case 'V': print_version(); return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind == argc) {
		errmsg("no command given");
		usage(stderr);
		return EXIT_USAGE;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[optind], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		errmsg("unknown command: %s", shown(argv[optind]));
		usage(stderr);
		return EXIT_USAGE;
	}
	if (argc - optind - 1 != cmd->nargs) {
		errmsg("%s: expects %s", cmd->name, cmd->args);
		return EXIT_USAGE;
	}
	if (o.json && strcmp(cmd->name, "list") && strcmp(cmd->name, "info")) {
		errmsg("--json: only for list and info");
		return EXIT_USAGE;
	}
	if (o.force && strcmp(cmd->name, "export")) {
		errmsg("-f: only for export");
		return EXIT_USAGE;
	}
	if (o.quiet && strcmp(cmd->name, "export")) {
		errmsg("-q: only for export");
		return EXIT_USAGE;
	}
	return cmd->run(argv + optind + 1, &o);
}
