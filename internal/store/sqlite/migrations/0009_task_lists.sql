-- Teams' shared task lists (DESIGN S-A6, internal/tasklist): a row per
-- list, whose write serialises the list's updates and numbers its items,
-- and a row per item, kept as the JSON of tasklist.Item.
CREATE TABLE task_lists (
	id         TEXT    PRIMARY KEY,
	next_item  INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE task_list_items (
	list TEXT    NOT NULL REFERENCES task_lists (id),
	id   TEXT    NOT NULL,
	seq  INTEGER NOT NULL, -- creation order: the item's number
	item TEXT    NOT NULL,
	PRIMARY KEY (list, id)
) STRICT;
