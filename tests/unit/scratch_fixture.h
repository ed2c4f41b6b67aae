/*
 * A scratch folder per test for the unit tests that write files (cmocka setup and teardown:
 * dir_setup makes SCRATCH_DIR, a mkdtemp template the test defines before including this,
 * dir_teardown removes it with everything in it). Header-only: each test includes it once.
 */
#ifndef PSGFS_TEST_SCRATCH_FIXTURE_H
#define PSGFS_TEST_SCRATCH_FIXTURE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

static char dir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int dir_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, SCRATCH_DIR);
	return mkdtemp(dir) ? 0 : -1;
}

static int dir_teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
