/*
 * free.c - freeing what no name reaches any more (rule 2: once the
 * pointers to it are cleared on disk), and files held open.
 */
#include "config.h"
#include "ops_int.h"

#include <stdlib.h>
#include <string.h>

int blist_add(struct blist *l, uint64_t blk)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		uint64_t *p = realloc(l->blk, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->blk = p;
		l->cap = cap;
	}
	l->blk[l->n++] = blk;
	return 0;
}

int collect_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		      int level, int bad, void *arg)
{
	(void)fs; (void)ino; (void)lblk; (void)level;
	return bad ? 0 : blist_add(arg, pblk);
}

int freeing_run(struct sufs_fs *fs, void *arg)
{
	struct freeing *f = arg;
	size_t i;
	int err = 0, e;

	for (i = 0; fs && i < f->blocks.n; i++)
		if ((e = free_block(fs, f->blocks.blk[i])) && !err)
			err = e;
	if (fs && f->ino && (e = free_inode(fs, f->ino, f->was_dir)) && !err)
		err = e;
	free(f->blocks.blk);
	free(f);
	return err;
}

/*
 * The blocks of a file going whose inode is on disk, but whose pointers
 * to them are not (inode_forget_blocks()): they go back at once, and
 * their slots are cleared in *kept, which then names only the blocks a
 * pointer on disk may name.  Returns 1 when some went, 0 when none, or a
 * negative error.
 */
static int free_fresh_blocks(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *kept)
{
	struct sufs_inode fresh = *kept;
	struct blist now = { 0 };
	unsigned mask, i;
	size_t k;
	int err = inode_forget_blocks(fs, ino, kept, &mask);

	if (err != 1)
		return err;
	for (i = 0; i < SUFS_NBLOCKS; i++) {
		if (mask & (1u << i))
			kept->block[i] = 0;
		else
			fresh.block[i] = 0;
	}
	err = inode_walk(fs, ino, &fresh, collect_fn, &now);
	for (k = 0; !err && k < now.n; k++)
		err = free_block(fs, now.blk[k]);
	free(now.blk);
	return err ? err : 1;
}

/*
 * Free an inode no name reaches any more: it is zeroed on disk once w is
 * (the removal of its last name), and its blocks and number go back to the
 * bitmaps once the zeroed inode is on disk.
 *
 * A file that never reached the disk goes at once, as FreeBSD cancels the
 * dependencies of a file removed early: its data is never written, and
 * its blocks and number are free for the next file.  That is safe only
 * when no name of it can still reach the disk: inode_forget_new() says.
 */
int inode_free(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in,
		      const struct waits *w)
{
	struct sufs_inode zero, kept = *in;
	struct freeing *f = calloc(1, sizeof(*f));
	upd_id z;
	int err = 0, taken = 0;

	if (!f)
		return -ENOMEM;
	f->ino = ino;
	f->was_dir = S_ISDIR(in->mode);
	if (f->was_dir)
		dirhash_drop(fs, ino);
	/* on disk, but not its newer pointers: their blocks go now */
	if (S_ISREG(in->mode))
		err = taken = free_fresh_blocks(fs, ino, &kept);
	if (err >= 0)
		err = inode_walk(fs, ino, &kept, collect_fn, &f->blocks);
	if (!err && in->xattr_block && block_in_range(fs, in->xattr_block))
		err = blist_add(&f->blocks, in->xattr_block); /* its attribute block */
	if (!err && !f->was_dir && !taken) {
		/* never on disk: nothing on disk points to it or its blocks */
		err = inode_forget_new(fs, ino);
		if (err == 1)
			return freeing_run(fs, f);
	}
	if (!err) {
		memset(&zero, 0, sizeof(zero));
		err = inode_store(fs, ino, &zero, UPD_FREEFILE, w, &z);
	}
	if (err) {
		free(f->blocks.blk);
		free(f);
		return err;
	}
	return deps_defer(fs, &z, 1, freeing_run, f);
}

/* An inode no name reaches (a leak the background check found): it goes,
 * with what it holds. */
int ops_release_inode(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	int err = load_live(fs, ino, &in);

	if (!err && hold_count(fs, ino))
		return 0; /* a file open and unlinked: its last release frees it */
	return err ? err : inode_free(fs, ino, &in, NULL);
}

/* ---- files held open ----------------------------------------------------------- */

/*
 * A program that has a file open keeps it, as a process keeps an unlinked
 * file on any Unix file system: its last name may go (its link count is
 * then 0 on disk) while its inode and blocks stay until the last hold is
 * released.  The holds are a sorted array of (inode, count).
 */
static size_t hold_slot(const struct sufs_fs *fs, uint32_t ino)
{
	size_t lo = 0, hi = fs->nholds;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (fs->holds[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint32_t hold_count(const struct sufs_fs *fs, uint32_t ino)
{
	size_t i = hold_slot(fs, ino);

	return i < fs->nholds && fs->holds[i].ino == ino ? fs->holds[i].count : 0;
}

int sufs_hold(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	size_t i;
	int err = load_live(fs, ino, &in);

	if (err)
		return err;
	i = hold_slot(fs, ino);
	if (i < fs->nholds && fs->holds[i].ino == ino) {
		if (fs->holds[i].count == UINT32_MAX)
			return -EMFILE;
		fs->holds[i].count++;
		return 0;
	}
	if (fs->nholds == fs->capholds) {
		size_t cap = fs->capholds ? 2 * fs->capholds : 64;
		struct hold *p = realloc(fs->holds, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		fs->holds = p;
		fs->capholds = cap;
	}
	memmove(&fs->holds[i + 1], &fs->holds[i], (fs->nholds - i) * sizeof(*fs->holds));
	fs->holds[i] = (struct hold){ ino, 1 };
	fs->nholds++;
	return 0;
}

/* The last hold of a file no name reaches: it goes, with what it holds. */
static int orphan_free(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	int err = load_live(fs, ino, &in);

	if (err)
		return err == -ENOENT ? 0 : err;
	return in.links == 0 && !S_ISDIR(in.mode) ? inode_free(fs, ino, &in, NULL) : 0;
}

int sufs_release(struct sufs_fs *fs, uint32_t ino)
{
	size_t i = hold_slot(fs, ino);

	if (i == fs->nholds || fs->holds[i].ino != ino)
		return -EINVAL;
	if (--fs->holds[i].count)
		return 0;
	memmove(&fs->holds[i], &fs->holds[i + 1], (fs->nholds - i - 1) * sizeof(*fs->holds));
	fs->nholds--;
	if (writable(fs))
		return 0; /* read-only: nothing was unlinked */
	return fs_op_end(fs, orphan_free(fs, ino));
}

/* At close: the files still held that no name reaches go. */
int ops_release_all(struct sufs_fs *fs)
{
	int err = 0, e;

	while (fs->nholds) {
		uint32_t ino = fs->holds[--fs->nholds].ino;
		if (writable(fs) == 0 && (e = orphan_free(fs, ino)) != 0 && !err)
			err = e;
	}
	return err;
}
