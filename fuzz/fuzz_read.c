/*
 * fuzz_read.c - libFuzzer target: the read side of the library on any
 * image, as sufs-debug and sufs-dump use it.
 *
 * The input is an image, opened read-only (checksums ignored, as sufs-dump
 * opens).  The directory tree is walked from the root: every entry is
 * looked up by name and by path, stat()ed, its blocks iterated, its
 * extended attributes listed and read, a regular file read, a symlink
 * read and followed.  The walk is bounded (depth,
 * entries, bytes) so that a directory loop or a huge file ends.  Any
 * crash, sanitizer report or leak is a finding; errors are expected.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "memdev.h"
#include "sufs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DEPTH   8
#define MAX_ENTRIES 256      /* entries visited per input */
#define MAX_READ    65536    /* bytes read per file */

struct walk {
	struct sufs_fs *fs;
	char path[1024];
	size_t len;
	unsigned depth, entries;
};

static void visit_dir(struct walk *w, uint32_t dir);

static int count_block(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		       int level, int bad, void *arg)
{
	(void)fs; (void)ino; (void)lblk; (void)pblk; (void)level; (void)bad;
	return ++*(unsigned *)arg > 4096; /* enough: stop the walk */
}

/* An inode's extended attributes: listed, each read (and with a buffer of
 * one byte, to be refused). */
static void visit_xattrs(struct walk *w, uint32_t ino)
{
	static char list[SUFS_XATTR_LIST_MAX];
	static uint8_t value[SUFS_XATTR_SIZE_MAX];
	size_t len = 0, vlen, off;

	if (sufs_listxattr(w->fs, ino, list, sizeof(list), &len, NULL))
		return;
	for (off = 0; off < len; off += strlen(list + off) + 1) {
		sufs_getxattr(w->fs, ino, list + off, value, sizeof(value), &vlen, NULL);
		sufs_getxattr(w->fs, ino, list + off, value, 1, &vlen, NULL);
	}
}

static void visit_file(struct walk *w, uint32_t ino)
{
	static uint8_t buf[MAX_READ];
	struct sufs_stat st;
	unsigned blocks = 0;
	size_t done;
	uint64_t pblk;
	char link[4096];

	if (sufs_stat(w->fs, ino, &st))
		return;
	visit_xattrs(w, ino);
	sufs_block_iterate(w->fs, ino, count_block, &blocks);
	sufs_bmap(w->fs, ino, 0, &pblk);
	sufs_bmap(w->fs, ino, st.size / sufs_get_super(w->fs)->block_size, &pblk);
	switch (st.mode & 0170000) {
	case 0100000:
		sufs_read(w->fs, ino, 0, buf, sizeof(buf), &done);
		if (st.size > sizeof(buf))
			sufs_read(w->fs, ino, st.size - sizeof(buf) / 2, buf, sizeof(buf), &done);
		break;
	case 0120000:
		sufs_readlink(w->fs, ino, link, sizeof(link), &done);
		break;
	case 0040000:
		if (w->depth < MAX_DEPTH) {
			w->depth++;
			visit_dir(w, ino);
			w->depth--;
		}
		break;
	}
}

static int visit_entry(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct walk *w = arg;
	size_t old = w->len;
	uint32_t found;

	(void)ftype;
	if (++w->entries > MAX_ENTRIES)
		return 1;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (old + 1 + len >= sizeof(w->path) || memchr(name, 0, len))
		return 0;
	w->path[old] = '/';
	memcpy(w->path + old + 1, name, len);
	w->len = old + 1 + len;
	w->path[w->len] = 0;
	sufs_namei(w->fs, SUFS_ROOT_INO, w->path, 1, &found);
	sufs_namei(w->fs, SUFS_ROOT_INO, w->path, 0, &found);
	visit_file(w, ino);
	w->len = old;
	w->path[old] = 0;
	return 0;
}

static void visit_dir(struct walk *w, uint32_t dir)
{
	uint32_t ino;

	sufs_lookup(w->fs, dir, "..", 2, &ino);
	sufs_lookup(w->fs, dir, "no such name", 12, &ino);
	sufs_readdir(w->fs, dir, visit_entry, w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sufs_dev *dev = memdev_new((uint8_t *)data, size, 0);
	struct walk w;
	struct sufs_group gd;
	uint32_t g;

	if (!dev)
		abort();
	memset(&w, 0, sizeof(w));
	if (sufs_open_dev(dev, SUFS_OPEN_IGNORE_CSUM, 0, &w.fs)) {
		sufs_dev_close(dev);
		return 0;
	}
	for (g = 0; g < sufs_get_super(w.fs)->groups_count; g++)
		sufs_get_group(w.fs, g, &gd);
	visit_file(&w, SUFS_ROOT_INO);
	sufs_close(w.fs);
	return 0;
}
