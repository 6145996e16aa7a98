-- Hold music per tenant and per extension (resources.md §1.1, §2.1): a
-- music-on-hold class of the same tenant, rendered as the directory
-- user's hold_music (local_stream://<tenant>_<class>).
ALTER TABLE tenants ADD COLUMN moh_class_id INTEGER NULL REFERENCES music_on_hold(id);
ALTER TABLE extensions ADD COLUMN moh_class_id INTEGER NULL REFERENCES music_on_hold(id);
