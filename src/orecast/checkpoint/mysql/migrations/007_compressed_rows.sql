-- Version 7 on MySQL: the tables that grow with a conversation store their pages compressed (zlib,
-- 8 kB pages). InnoDB gives a table its first 32 pages one by one, then whole extents (1 MiB of 16 kB
-- pages): a 200-turn thread's checkpoints (~620 B a row) and items (~1 kB of JSON each) passed 32
-- pages and took 1.6 MB each, mostly empty. Compressed, the same rows take half as many pages of half
-- the size: 3.9 MB -> 1.9 MB in all for that thread (docs/benchmarks.md, "MySQL and MariaDB"). The
-- columns, keys and JSON functions are unchanged. MySQL 8 and MariaDB >= 10.6.6 write compressed
-- tables; MariaDB 10.6.0-10.6.5 needs innodb_read_only_compressed = OFF. Each statement rebuilds its
-- table: on a large store, run the upgrade (`orecast db migrate`) at a quiet hour.
ALTER TABLE checkpoints ROW_FORMAT = COMPRESSED KEY_BLOCK_SIZE = 8;
ALTER TABLE items ROW_FORMAT = COMPRESSED KEY_BLOCK_SIZE = 8;
ALTER TABLE channel_values ROW_FORMAT = COMPRESSED KEY_BLOCK_SIZE = 8;
ALTER TABLE writes ROW_FORMAT = COMPRESSED KEY_BLOCK_SIZE = 8;
