/*
 * metaimage.h - save the metadata of a sufs image into one compressed file,
 * and turn such a file back into a sparse raw image (like e2image -r).
 *
 * The file format is described at the top of metaimage.c and in
 * sufs-dump(8).  Both functions print their own messages (naming the file
 * concerned) and return the exit status sufs-dump should end with.
 */
#ifndef SUFS_DUMP_METAIMAGE_H
#define SUFS_DUMP_METAIMAGE_H

#include "sufs.h"

#include "util.h"

/* The exit statuses are common/util.h's (sufs-dump(8), EXIT STATUS): a
 * problem of the metadata image or of an output file is EXIT_FILE. */

/*
 * Write every metadata block of the open file system (image_name names it
 * in messages) to a new metadata image at out.  An existing out is refused
 * unless force is set.
 */
int metaimage_save(struct sufs_fs *fs, const char *image_name, const char *out, int force);

/*
 * Read the metadata image at meta and write a sparse raw image of the
 * original size to out.  An existing out is refused unless force is set.
 */
int metaimage_restore(const char *meta, const char *out, int force);

#endif
