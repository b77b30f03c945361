-- The contacts' status CHECK as comparisons instead of IN. SQLite evaluates a CHECK with
-- an IN list of more than two values by building a temporary B-tree of the list for every
-- row it checks: each contact INSERT opened one, filled it with the five statuses and
-- closed it again, inside the single writer's turn (about 18,000 instructions of a
-- create_contact's ~350,000; docs/performance.md, session 29). The same constraint written
-- with OR needs none. The values and the meaning are unchanged.
--
-- A CHECK is not part of a table's file format, so SQLite's documented way for such a
-- change is to edit the table's SQL in sqlite_schema (https://www.sqlite.org/lang_altertable.html,
-- "Making Other Kinds Of Table Schema Changes") instead of copying the table, which would
-- take every contact through a new table and, with foreign keys on, cascade the DROP to
-- the memberships. A database whose CHECK reads otherwise is left as it is. The CREATE and
-- DROP that follow change the schema cookie, so that every connection reads the new SQL;
-- RESET makes this one read it too.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(sql,
  'CHECK (status IN (''pending'',''subscribed'',''unsubscribed'',''bounced'',''complained''))',
  'CHECK (status = ''pending'' OR status = ''subscribed'' OR status = ''unsubscribed'' OR status = ''bounced'' OR status = ''complained'')')
WHERE type = 'table' AND name = 'contacts';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_cookie_0058 (x INTEGER);
DROP TABLE schema_cookie_0058;
