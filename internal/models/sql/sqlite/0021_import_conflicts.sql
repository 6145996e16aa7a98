-- conflict_rows counts the rows of a bulk CDR import refused because their
-- external_id was imported before with other content (a conflict, listed
-- in import_errors with code conflict and included in failed_rows), apart
-- from duplicate_rows (the same content again, skipped).
ALTER TABLE import_jobs ADD COLUMN conflict_rows INTEGER NOT NULL DEFAULT 0;
