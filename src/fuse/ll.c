void psgfs_ll_placeholder(void);
