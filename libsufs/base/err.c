/* err.c - one error-to-string for every code the library returns. */
#include "config.h"
#include "sufs.h"

#include <string.h>

static const char *const messages[] = {
	[SUFS_EMAGIC - SUFS_EBASE] = "not a sufs file system (bad magic number)",
	[SUFS_EVERSION - SUFS_EBASE] = "unsupported sufs format version",
	[SUFS_ECHECKSUM - SUFS_EBASE] = "checksum does not match",
	[SUFS_ECORRUPT - SUFS_EBASE] = "corrupt metadata",
	[SUFS_ETRUNCATED - SUFS_EBASE] = "image is shorter than its superblock says (truncated)",
	[SUFS_EGEOMETRY - SUFS_EBASE] = "layout does not fit or is invalid",
	[SUFS_EINCOMPLETE - SUFS_EBASE] = "mkfs did not finish on this image",
	[SUFS_EFEATURE - SUFS_EBASE] = "image uses features this version does not support",
	[SUFS_ENOSLOT - SUFS_EBASE] = "all snapshot slots are taken",
	[SUFS_ENOTSNAP - SUFS_EBASE] = "no such snapshot",
	[SUFS_EBGREFUSED - SUFS_EBASE] = "background check refused: the image needs a full check",
	[SUFS_ESHORT - SUFS_EBASE] = "not a sufs file system (too small to hold a superblock)",
	[SUFS_ENOTIMAGE - SUFS_EBASE] = "neither a regular file nor a block device",
	[SUFS_EINUSE - SUFS_EBASE] = "another program has it open for writing",
	[SUFS_EROFEATURE - SUFS_EBASE] =
		"image uses features this version may only read: open it read-only",
};

const char *sufs_strerror(int err)
{
	int e = err < 0 ? -err : err;

	if (e == 0)
		return "success";
	if (e > SUFS_EBASE && e < SUFS_ELAST && messages[e - SUFS_EBASE])
		return messages[e - SUFS_EBASE];
	if (e < SUFS_EBASE)
		return strerror(e);
	return "unknown error";
}

const char *sufs_version(void)
{
	return PACKAGE_VERSION;
}
