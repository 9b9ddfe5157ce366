/*
 * nodes.c - the kernel's references to inodes, and the holds they keep.
 *
 * Why a hold per inode the kernel knows, rather than one per open file:
 * the kernel refers to an inode by its number (the FUSE nodeid) for as
 * long as its lookup count is above zero, open or not: a file unlinked
 * while open, an inode kept in its cache, a directory that is some
 * process's working directory.  If sufs freed such an inode at its last
 * unlink and gave its number to a new file, the kernel would take the new
 * file for the old one (its cached pages and attributes included).  Held
 * until the kernel forgets it, an unlinked inode lives as long as the
 * kernel may use it (its data until the last close, as POSIX wants), and
 * goes as soon as it forgets it, which for an unlinked file the kernel
 * does at the last close.  A crash leaves the held inodes that no name
 * reaches as leaks (the library's promise), which the background check
 * frees.
 */
#include "config.h"

#include "sufs-fuse.h"

#include <errno.h>
#include <stdlib.h>

#define PAGE_SHIFT 12
#define PAGE_INODES (1u << PAGE_SHIFT)

int nodes_init(struct nodes *n, uint32_t inodes_count)
{
	n->npages = (uint32_t)(((uint64_t)inodes_count + 1 + PAGE_INODES - 1) >> PAGE_SHIFT);
	n->pages = calloc(n->npages, sizeof(*n->pages));
	n->known = 0;
	return n->pages ? 0 : -ENOMEM;
}

void nodes_free(struct nodes *n)
{
	uint32_t i;

	for (i = 0; n->pages && i < n->npages; i++)
		free(n->pages[i]);
	free(n->pages);
	n->pages = NULL;
}

/* The counter of ino, made when make is set; NULL if out of range (or out
 * of memory). */
static uint64_t *counter(struct nodes *n, uint32_t ino, int make)
{
	uint32_t page = ino >> PAGE_SHIFT;

	if (page >= n->npages)
		return NULL;
	if (!n->pages[page] && make)
		n->pages[page] = calloc(PAGE_INODES, sizeof(**n->pages));
	return n->pages[page] ? &n->pages[page][ino & (PAGE_INODES - 1)] : NULL;
}

int nodes_ref(struct nodes *n, struct sufs_fs *fs, uint32_t ino)
{
	uint64_t *c = counter(n, ino, 1);
	int rc;

	if (!c)
		return -ENOMEM;
	if (*c == 0) {
		rc = sufs_hold(fs, ino);
		if (rc)
			return rc;
		n->known++;
	}
	(*c)++;
	return 0;
}

void nodes_forget(struct nodes *n, struct sufs_fs *fs, uint32_t ino, uint64_t count)
{
	uint64_t *c = counter(n, ino, 0);

	/* the kernel never forgets more than it was told; if it did, the
	 * hold was given back already */
	if (!c || *c == 0)
		return;
	*c = count < *c ? *c - count : 0;
	if (*c == 0) {
		n->known--;
		/* an unlinked file goes now, with its blocks; an error in
		 * writing that back is the write-back's to report */
		sufs_release(fs, ino);
	}
}

int nodes_known(const struct nodes *n, uint32_t ino)
{
	uint32_t page = ino >> PAGE_SHIFT;

	return page < n->npages && n->pages[page] &&
	       n->pages[page][ino & (PAGE_INODES - 1)] != 0;
}
