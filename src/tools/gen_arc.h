/* psgfs-gen big|game|stream: EA archives and stream files (src/tools/gen_arc.c). */
#ifndef PSGFS_GEN_ARC_H
#define PSGFS_GEN_ARC_H

#include <stdbool.h>
#include <stdio.h>

bool gen_arc_kind(const char *kind);
int gen_arc_main(int argc, char **argv);
void gen_arc_usage(FILE *out);

#endif
