-- A covering index for the contacts report's read of contact_daily (issue 12: reports
-- under 20 ms at 1,000,000 contacts). get_contacts_report reads every row of its range,
-- (day, status, source, n); through the primary key's index each row took a second
-- lookup in the table for n. With 1,000,000 contacts over two years, a 365-day report
-- reads about 11,000 rows, and this index halves that scan (docs/performance.md,
-- session 34). The rows change at most once per group commit batch for new contacts
-- (Conn::AddTo), so the write side barely moves.
CREATE INDEX IF NOT EXISTS contact_daily_cover ON contact_daily (day, status, source, n);
