/*
 * The Skate skater rig: 131 bone names and their parents, the hierarchy a RenderModelData
 * does not store (docs/skate-objects.md, "Skater rig"). Source: the hard-coded
 * name -> parent table of AASkate-Blender-Addon (Skate Modding Team),
 * documentation/rw4_import_skeleton.py @05e5635 (bone_hierarchy). Parents are indices into
 * this table and always precede their children; roots have -1 (TRAJECTORY, HIPS,
 * SKATEBOARD_ROOT and the *_REPARENTED bones). Real files spell the names in mixed case
 * (Hips, LeftUpLeg): compare case-insensitively.
 */
#include <strings.h>

#include "psgfs/formats/skate_mesh.h"

/* clang-format off */
const struct skate_rig_bone skate_rig[SKATE_RIG_BONES] = {
    /*   0 */ {"TRAJECTORY", -1},
    /*   1 */ {"HIPS", -1},
    /*   2 */ {"SPINE", 1}, /* HIPS */
    /*   3 */ {"SPINE1", 2}, /* SPINE */
    /*   4 */ {"SPINE2", 3}, /* SPINE1 */
    /*   5 */ {"SPINE3", 4}, /* SPINE2 */
    /*   6 */ {"NECK", 5}, /* SPINE3 */
    /*   7 */ {"NECK1", 6}, /* NECK */
    /*   8 */ {"HEAD", 7}, /* NECK1 */
    /*   9 */ {"RIGHTSHOULDER", 5}, /* SPINE3 */
    /*  10 */ {"RIGHTARM", 9}, /* RIGHTSHOULDER */
    /*  11 */ {"RIGHTFOREARM", 10}, /* RIGHTARM */
    /*  12 */ {"RIGHTHAND", 11}, /* RIGHTFOREARM */
    /*  13 */ {"LEFTSHOULDER", 5}, /* SPINE3 */
    /*  14 */ {"LEFTARM", 13}, /* LEFTSHOULDER */
    /*  15 */ {"LEFTFOREARM", 14}, /* LEFTARM */
    /*  16 */ {"LEFTHAND", 15}, /* LEFTFOREARM */
    /*  17 */ {"RIGHTUPLEG", 1}, /* HIPS */
    /*  18 */ {"RIGHTLEG", 17}, /* RIGHTUPLEG */
    /*  19 */ {"RIGHTFOOT", 18}, /* RIGHTLEG */
    /*  20 */ {"RIGHTTOEBASE", 19}, /* RIGHTFOOT */
    /*  21 */ {"LEFTUPLEG", 1}, /* HIPS */
    /*  22 */ {"LEFTLEG", 21}, /* LEFTUPLEG */
    /*  23 */ {"LEFTFOOT", 22}, /* LEFTLEG */
    /*  24 */ {"LEFTTOEBASE", 23}, /* LEFTFOOT */
    /*  25 */ {"SKATEBOARD_ROOT", -1},
    /*  26 */ {"TRUCK_FRONT", 25}, /* SKATEBOARD_ROOT */
    /*  27 */ {"RIGHT_WHEELFRONT", 26}, /* TRUCK_FRONT */
    /*  28 */ {"LEFT_WHEELFRONT", 26}, /* TRUCK_FRONT */
    /*  29 */ {"TRUCK_BACK", 25}, /* SKATEBOARD_ROOT */
    /*  30 */ {"LEFT_WHEELBACK", 29}, /* TRUCK_BACK */
    /*  31 */ {"RIGHT_WHEELBACK", 29}, /* TRUCK_BACK */
    /*  32 */ {"LEFTHANDTHUMB1", 16}, /* LEFTHAND */
    /*  33 */ {"LEFTHANDTHUMB2", 32}, /* LEFTHANDTHUMB1 */
    /*  34 */ {"LEFTHANDTHUMB3", 33}, /* LEFTHANDTHUMB2 */
    /*  35 */ {"LEFTHANDINDEX1", 16}, /* LEFTHAND */
    /*  36 */ {"LEFTHANDINDEX2", 35}, /* LEFTHANDINDEX1 */
    /*  37 */ {"LEFTHANDINDEX3", 36}, /* LEFTHANDINDEX2 */
    /*  38 */ {"LEFTHANDMIDDLE1", 16}, /* LEFTHAND */
    /*  39 */ {"LEFTHANDMIDDLE2", 38}, /* LEFTHANDMIDDLE1 */
    /*  40 */ {"LEFTHANDMIDDLE3", 39}, /* LEFTHANDMIDDLE2 */
    /*  41 */ {"LEFTINHANDRING", 16}, /* LEFTHAND */
    /*  42 */ {"LEFTHANDRING1", 41}, /* LEFTINHANDRING */
    /*  43 */ {"LEFTHANDRING2", 42}, /* LEFTHANDRING1 */
    /*  44 */ {"LEFTHANDRING3", 43}, /* LEFTHANDRING2 */
    /*  45 */ {"LEFTINHANDPINKY", 16}, /* LEFTHAND */
    /*  46 */ {"LEFTHANDPINKY1", 45}, /* LEFTINHANDPINKY */
    /*  47 */ {"LEFTHANDPINKY2", 46}, /* LEFTHANDPINKY1 */
    /*  48 */ {"LEFTHANDPINKY3", 47}, /* LEFTHANDPINKY2 */
    /*  49 */ {"RIGHTHANDTHUMB1", 12}, /* RIGHTHAND */
    /*  50 */ {"RIGHTHANDTHUMB2", 49}, /* RIGHTHANDTHUMB1 */
    /*  51 */ {"RIGHTHANDTHUMB3", 50}, /* RIGHTHANDTHUMB2 */
    /*  52 */ {"RIGHTHANDINDEX1", 12}, /* RIGHTHAND */
    /*  53 */ {"RIGHTHANDINDEX2", 52}, /* RIGHTHANDINDEX1 */
    /*  54 */ {"RIGHTHANDINDEX3", 53}, /* RIGHTHANDINDEX2 */
    /*  55 */ {"RIGHTHANDMIDDLE1", 12}, /* RIGHTHAND */
    /*  56 */ {"RIGHTHANDMIDDLE2", 55}, /* RIGHTHANDMIDDLE1 */
    /*  57 */ {"RIGHTHANDMIDDLE3", 56}, /* RIGHTHANDMIDDLE2 */
    /*  58 */ {"RIGHTINHANDRING", 12}, /* RIGHTHAND */
    /*  59 */ {"RIGHTHANDRING1", 58}, /* RIGHTINHANDRING */
    /*  60 */ {"RIGHTHANDRING2", 59}, /* RIGHTHANDRING1 */
    /*  61 */ {"RIGHTHANDRING3", 60}, /* RIGHTHANDRING2 */
    /*  62 */ {"RIGHTINHANDPINKY", 12}, /* RIGHTHAND */
    /*  63 */ {"RIGHTHANDPINKY1", 62}, /* RIGHTINHANDPINKY */
    /*  64 */ {"RIGHTHANDPINKY2", 63}, /* RIGHTHANDPINKY1 */
    /*  65 */ {"RIGHTHANDPINKY3", 64}, /* RIGHTHANDPINKY2 */
    /*  66 */ {"RIGHTTOEBASE_REPARENTED", -1},
    /*  67 */ {"LEFTTOEBASE_REPARENTED", -1},
    /*  68 */ {"RIGHTHAND_REPARENTED", -1},
    /*  69 */ {"LEFTHAND_REPARENTED", -1},
    /*  70 */ {"RIGHTSHOULDERHLP", 5}, /* SPINE3 */
    /*  71 */ {"RIGHTARMTWIST", 10}, /* RIGHTARM */
    /*  72 */ {"RIGHTFOREARMTWIST", 11}, /* RIGHTFOREARM */
    /*  73 */ {"RIGHTFOREARMTWIST1", 11}, /* RIGHTFOREARM */
    /*  74 */ {"LEFTSHOULDERHLP", 5}, /* SPINE3 */
    /*  75 */ {"LEFTARMTWIST", 14}, /* LEFTARM */
    /*  76 */ {"LEFTFOREARMTWIST", 15}, /* LEFTFOREARM */
    /*  77 */ {"LEFTFOREARMTWIST1", 15}, /* LEFTFOREARM */
    /*  78 */ {"RIGHTUPLEGHLP", 1}, /* HIPS */
    /*  79 */ {"RIGHTUPLEGTWIST", 17}, /* RIGHTUPLEG */
    /*  80 */ {"LEFTUPLEGHLP", 1}, /* HIPS */
    /*  81 */ {"LEFTUPLEGTWIST", 21}, /* LEFTUPLEG */
    /*  82 */ {"FACE", 8}, /* HEAD */
    /*  83 */ {"OFFSET_JAW", 82}, /* FACE */
    /*  84 */ {"JAW", 83}, /* OFFSET_JAW */
    /*  85 */ {"OFFSET_CHIN", 84}, /* JAW */
    /*  86 */ {"CHIN", 85}, /* OFFSET_CHIN */
    /*  87 */ {"OFFSET_LOWERLIP", 84}, /* JAW */
    /*  88 */ {"OFFSET_LEFTLOWERLIP", 84}, /* JAW */
    /*  89 */ {"OFFSET_RIGHTLOWERLIP", 84}, /* JAW */
    /*  90 */ {"OFFSET_TONGUE", 84}, /* JAW */
    /*  91 */ {"OFFSET_LEFTCHEEK", 82}, /* FACE */
    /*  92 */ {"OFFSET_LEFTEYE", 82}, /* FACE */
    /*  93 */ {"OFFSET_LEFTMOUTH", 82}, /* FACE */
    /*  94 */ {"OFFSET_LEFTUPCHEEK", 82}, /* FACE */
    /*  95 */ {"OFFSET_LEFTUPPERLIP", 82}, /* FACE */
    /*  96 */ {"OFFSET_RIGHTCHEEK", 82}, /* FACE */
    /*  97 */ {"OFFSET_RIGHTEYE", 82}, /* FACE */
    /*  98 */ {"OFFSET_RIGHTMOUTH", 82}, /* FACE */
    /*  99 */ {"OFFSET_RIGHTUPCHEEK", 82}, /* FACE */
    /* 100 */ {"OFFSET_RIGHTUPPERLIP", 82}, /* FACE */
    /* 101 */ {"OFFSET_UPPERLIP", 82}, /* FACE */
    /* 102 */ {"TONGUE", 90}, /* OFFSET_TONGUE */
    /* 103 */ {"OFFSET_TONGUETIP", 102}, /* TONGUE */
    /* 104 */ {"LEFTLOWERLIP", 88}, /* OFFSET_LEFTLOWERLIP */
    /* 105 */ {"LOWERLIP", 87}, /* OFFSET_LOWERLIP */
    /* 106 */ {"RIGHTLOWERLIP", 89}, /* OFFSET_RIGHTLOWERLIP */
    /* 107 */ {"TONGUETIP", 103}, /* OFFSET_TONGUETIP */
    /* 108 */ {"LEFTCHEEK", 91}, /* OFFSET_LEFTCHEEK */
    /* 109 */ {"LEFTCREASE", 82}, /* FACE */
    /* 110 */ {"LEFTEYE", 92}, /* OFFSET_LEFTEYE */
    /* 111 */ {"LEFTINNEREYEBROW", 82}, /* FACE */
    /* 112 */ {"LEFTLOWEYELID", 82}, /* FACE */
    /* 113 */ {"LEFTMOUTH", 93}, /* OFFSET_LEFTMOUTH */
    /* 114 */ {"LEFTNOSE", 82}, /* FACE */
    /* 115 */ {"LEFTOUTEREYEBROW", 82}, /* FACE */
    /* 116 */ {"LEFTUPCHEEK", 94}, /* OFFSET_LEFTUPCHEEK */
    /* 117 */ {"LEFTUPEYELID", 82}, /* FACE */
    /* 118 */ {"LEFTUPPERLIP", 95}, /* OFFSET_LEFTUPPERLIP */
    /* 119 */ {"RIGHTCHEEK", 96}, /* OFFSET_RIGHTCHEEK */
    /* 120 */ {"RIGHTCREASE", 82}, /* FACE */
    /* 121 */ {"RIGHTEYE", 97}, /* OFFSET_RIGHTEYE */
    /* 122 */ {"RIGHTINNEREYEBROW", 82}, /* FACE */
    /* 123 */ {"RIGHTLOWEYELID", 82}, /* FACE */
    /* 124 */ {"RIGHTMOUTH", 98}, /* OFFSET_RIGHTMOUTH */
    /* 125 */ {"RIGHTNOSE", 82}, /* FACE */
    /* 126 */ {"RIGHTOUTEREYEBROW", 82}, /* FACE */
    /* 127 */ {"RIGHTUPCHEEK", 99}, /* OFFSET_RIGHTUPCHEEK */
    /* 128 */ {"RIGHTUPEYELID", 82}, /* FACE */
    /* 129 */ {"RIGHTUPPERLIP", 100}, /* OFFSET_RIGHTUPPERLIP */
    /* 130 */ {"UPPERLIP", 101}, /* OFFSET_UPPERLIP */
};
/* clang-format on */

int32_t skate_rig_find(const char *name)
{
	for (int32_t i = 0; i < SKATE_RIG_BONES; i++)
		if (!strcasecmp(skate_rig[i].name, name))
			return i;
	return -1;
}
