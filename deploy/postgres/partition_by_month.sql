-- Monthly partitions of a PostgreSQL checkpoint store, by the month each thread was created, so whole
-- months of old conversations are dropped with DROP TABLE instead of DELETE + VACUUM.
-- See docs/operations.md, "PostgreSQL at volume". Tested by tests/checkpoint/test_partitions.py.
--
-- How: every table of the store whose primary key starts with thread_id (threads, checkpoints,
-- channel_values, task_writes, item_pages, item_tail, …) becomes RANGE-partitioned on thread_id. orecast
-- mints thread ids as UUIDv7, whose first 48 bits are the creation time in milliseconds, so the ids of
-- one month form one range: partition <table>_pYYYYMM holds every row of the threads created that
-- month, in every table. Other ids (UUIDv4 from before, ids a client chose) live in <table>_default.
--
-- Use (psql, in the store's schema; the search_path decides which schema is converted):
--   \i deploy/postgres/partition_by_month.sql                     -- defines the three functions
--   SELECT * FROM orecast_partition_by_month('2026-01-01', 3);    -- once: convert, Jan 2026 … now + 3
--   SELECT * FROM orecast_add_month_partitions(3);                -- monthly (cron): the next months
--   SELECT * FROM orecast_drop_threads_before('2026-06-01');      -- drops threads created before June
-- The conversion copies every row and holds an exclusive lock on the store's tables meanwhile: stop
-- the service, or convert a new database. Everything else runs online.

-- The lower bound of a month's thread ids: the UUIDv7 prefix (hex time) of its first millisecond.
CREATE OR REPLACE FUNCTION orecast_month_bound(month date) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT substr(hex, 1, 8) || '-' || substr(hex, 9, 4)
    FROM (SELECT lpad(to_hex((extract(epoch FROM date_trunc('month', month::timestamp)) * 1000)::bigint), 12, '0')
          AS hex) AS t
$$;

-- Tables keyed by thread id left unpartitioned: their rows go by DELETE. None today; a table a later
-- migration adds that cannot be partitioned goes here.
CREATE OR REPLACE FUNCTION orecast_unpartitioned_tables() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$ SELECT ARRAY[]::text[] $$;

-- The store's tables partitioned by thread id, in this schema.
CREATE OR REPLACE FUNCTION orecast_partitioned_tables() RETURNS SETOF text
LANGUAGE sql STABLE AS $$
    SELECT c.relname::text
    FROM pg_partitioned_table AS p
    JOIN pg_class AS c ON c.oid = p.partrelid
    JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0]
    WHERE c.relnamespace = current_schema()::regnamespace AND a.attname = 'thread_id'
    ORDER BY c.relname
$$;

-- Partitions for every month from `first_month` (default: the current month) to `months_ahead` months
-- from now, in every partitioned table. Rows already in the default partition for a new month (a
-- month whose partition was not made in time) move into it. Returns the partitions made.
CREATE OR REPLACE FUNCTION orecast_add_month_partitions(months_ahead integer DEFAULT 3, first_month date DEFAULT NULL)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    tbl text;
    month date;
    part text;
    options text;
BEGIN
    FOR tbl IN SELECT orecast_partitioned_tables() LOOP
        SELECT coalesce(' WITH (' || array_to_string(c.reloptions, ', ') || ')', '') INTO options
        FROM pg_class AS c WHERE c.oid = format('%I', tbl || '_default')::regclass;
        month := date_trunc('month', coalesce(first_month, current_date));
        WHILE month <= date_trunc('month', current_date) + make_interval(months => months_ahead) LOOP
            part := tbl || '_p' || to_char(month, 'YYYYMM');
            IF to_regclass(format('%I', part)) IS NULL THEN
                EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)%s',
                               part, tbl, options);
                EXECUTE format('WITH moved AS (DELETE FROM %I WHERE thread_id >= %L AND thread_id < %L RETURNING *) '
                               'INSERT INTO %I SELECT * FROM moved',
                               tbl || '_default', orecast_month_bound(month),
                               orecast_month_bound((month + interval '1 month')::date), part);
                EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                               tbl, part, orecast_month_bound(month),
                               orecast_month_bound((month + interval '1 month')::date));
                RETURN NEXT part;
            END IF;
            month := (month + interval '1 month')::date;
        END LOOP;
    END LOOP;
END
$$;

-- Convert the store's tables (once; a table already partitioned is left alone), then make the month
-- partitions from `first_month` to `months_ahead` months ahead. Returns what it converted and made.
CREATE OR REPLACE FUNCTION orecast_partition_by_month(first_month date, months_ahead integer DEFAULT 3)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    tbl record;
    item record;
    view_names text[];
    view_defs text[];
    keys text[];
    indexes text[];
    statement text;
    i integer;
BEGIN
    -- the views of this schema name the tables being replaced (items, tool_calls): made again after
    SELECT array_agg(c.relname::text ORDER BY c.oid), array_agg(pg_get_viewdef(c.oid) ORDER BY c.oid)
    INTO view_names, view_defs
    FROM pg_class AS c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'v';
    FOR i IN REVERSE coalesce(array_length(view_names, 1), 0)..1 LOOP
        EXECUTE format('DROP VIEW IF EXISTS %I', view_names[i]);
    END LOOP;

    FOR tbl IN
        SELECT c.oid, c.relname::text AS name,
               coalesce(' WITH (' || array_to_string(c.reloptions, ', ') || ')', '') AS options
        FROM pg_class AS c
        JOIN pg_index AS x ON x.indrelid = c.oid AND x.indisprimary
        JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum = x.indkey[0]
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND NOT c.relispartition
          AND a.attname = 'thread_id' AND c.relname <> ALL (orecast_unpartitioned_tables())
        ORDER BY c.relname
    LOOP
        -- keys and indexes as they are now, recreated under the same names on the partitioned table
        SELECT coalesce(array_agg(format('ALTER TABLE %I ADD CONSTRAINT %I %s', tbl.name, k.conname,
                                         pg_get_constraintdef(k.oid))), '{}')
        INTO keys FROM pg_constraint AS k WHERE k.conrelid = tbl.oid AND k.contype IN ('p', 'u');
        SELECT coalesce(array_agg(pg_get_indexdef(x.indexrelid)), '{}') INTO indexes
        FROM pg_index AS x
        WHERE x.indrelid = tbl.oid AND NOT EXISTS (SELECT 1 FROM pg_constraint AS k WHERE k.conindid = x.indexrelid);
        FOR item IN SELECT k.conname FROM pg_constraint AS k WHERE k.conrelid = tbl.oid AND k.contype IN ('p', 'u') LOOP
            EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', tbl.name, item.conname, item.conname || '_old');
        END LOOP;
        FOR item IN SELECT c.relname FROM pg_index AS x JOIN pg_class AS c ON c.oid = x.indexrelid
                    WHERE x.indrelid = tbl.oid
                      AND NOT EXISTS (SELECT 1 FROM pg_constraint AS k WHERE k.conindid = x.indexrelid) LOOP
            EXECUTE format('ALTER INDEX %I RENAME TO %I', item.relname, item.relname || '_old');
        END LOOP;
        EXECUTE format('ALTER TABLE %I RENAME TO %I', tbl.name, tbl.name || '_old');

        EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE) '
                       'PARTITION BY RANGE (thread_id)', tbl.name, tbl.name || '_old');
        FOREACH statement IN ARRAY keys || indexes LOOP
            EXECUTE statement;
        END LOOP;
        EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT%s', tbl.name || '_default', tbl.name, tbl.options);
        EXECUTE format('INSERT INTO %I SELECT * FROM %I', tbl.name, tbl.name || '_old');
        EXECUTE format('DROP TABLE %I', tbl.name || '_old');
        RETURN NEXT tbl.name;
    END LOOP;

    FOR i IN 1..coalesce(array_length(view_names, 1), 0) LOOP
        EXECUTE format('CREATE VIEW %I AS %s', view_names[i], view_defs[i]);
    END LOOP;
    RETURN QUERY SELECT orecast_add_month_partitions(months_ahead, first_month);
END
$$;

-- Drop the month partitions of threads created before `before` (every table's; the unpartitioned
-- tables' rows of those months are deleted first, in the same transaction), after checking that
-- each holds only UUIDv7 threads: a UUIDv4 id can fall into a month's range by chance (about once in
-- 100,000 ids per month partition), and its thread must not go with the month. Returns what it dropped.
CREATE OR REPLACE FUNCTION orecast_drop_threads_before(before date)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    part record;
    tbl text;
    stray text;
BEGIN
    FOR part IN
        SELECT c.relname::text AS name, substr(c.relname, length(c.relname) - 5) AS yyyymm
        FROM pg_inherits AS h
        JOIN pg_class AS c ON c.oid = h.inhrelid
        JOIN pg_class AS parent ON parent.oid = h.inhparent
        WHERE parent.relname = 'threads' AND parent.relnamespace = current_schema()::regnamespace
          AND c.relname ~ '^threads_p[0-9]{6}$'
          AND to_date(substr(c.relname, length(c.relname) - 5), 'YYYYMM') < date_trunc('month', before)
        ORDER BY c.relname
    LOOP
        EXECUTE format('SELECT string_agg(thread_id, '', '') FROM (SELECT thread_id FROM %I '
                       'WHERE substr(thread_id, 15, 1) <> ''7'' LIMIT 5) AS s', part.name) INTO stray;
        IF stray IS NOT NULL THEN
            RAISE EXCEPTION 'partition % holds threads whose ids are not UUIDv7 (%): export them (orecast threads export) and delete them first',
                part.name, stray;
        END IF;
        FOR tbl IN SELECT unnest(orecast_unpartitioned_tables()) LOOP
            IF to_regclass(format('%I', tbl)) IS NOT NULL THEN
                EXECUTE format('DELETE FROM %I WHERE thread_id >= %L AND thread_id < %L', tbl,
                               orecast_month_bound(to_date(part.yyyymm, 'YYYYMM')),
                               orecast_month_bound((to_date(part.yyyymm, 'YYYYMM') + interval '1 month')::date));
            END IF;
        END LOOP;
        FOR tbl IN SELECT orecast_partitioned_tables() LOOP
            IF to_regclass(format('%I', tbl || '_p' || part.yyyymm)) IS NOT NULL THEN
                EXECUTE format('DROP TABLE %I', tbl || '_p' || part.yyyymm);
                RETURN NEXT tbl || '_p' || part.yyyymm;
            END IF;
        END LOOP;
    END LOOP;
END
$$;
