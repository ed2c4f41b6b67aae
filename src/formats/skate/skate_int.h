/* Functions shared by the skate_*.c files and nobody else. */
#ifndef PSGFS_SKATE_INT_H
#define PSGFS_SKATE_INT_H

#include "psgfs/base/diag.h"
#include "psgfs/base/result.h"
#include "psgfs/formats/skate_mesh.h"

/* Set every bone's parent (skate_hierarchy.c): from tsv when given, else from the built-in
 * skater rig when the names match it, else leave the default (every bone under bone 0).
 * Records the source in sc->hierarchy and sc->hier_matched. RC_NOMEM only. */
enum rc skate_hierarchy_build(struct skate_scene *sc, const char *tsv, struct diag *d);

#endif
