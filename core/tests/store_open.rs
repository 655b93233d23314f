//! Opening a data directory: every failure names the database file or the directory and says
//! what to do, and one directory is opened by one process of the app at a time.

use harness_core::store::{DATABASE_FILE, Store};

#[test]
fn a_database_file_of_garbage_is_named_and_can_be_moved_aside() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DATABASE_FILE);
    std::fs::write(&path, vec![0x5a; 8192]).unwrap();
    let err = Store::open(dir.path())
        .err()
        .expect("garbage must not open");
    assert_eq!(
        err.to_string(),
        format!(
            "the database {} is not a SQLite database (it may be corrupt); move it aside to start afresh",
            path.display()
        )
    );
    // Nothing was written over it.
    assert_eq!(std::fs::read(&path).unwrap(), vec![0x5a; 8192]);
}

#[test]
fn a_folder_where_the_database_file_belongs_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DATABASE_FILE);
    std::fs::create_dir(&path).unwrap();
    let err = Store::open(dir.path())
        .err()
        .expect("a folder must not open");
    assert_eq!(
        err.to_string(),
        format!(
            "the database {} is a folder, not a file; move it aside to start afresh",
            path.display()
        )
    );
}

#[test]
fn a_data_directory_that_cannot_be_created_is_named() {
    let dir = tempfile::tempdir().unwrap();
    // A file where a folder of the path must be: even root cannot create beneath it.
    std::fs::write(dir.path().join("file"), b"x").unwrap();
    let data = dir.path().join("file").join("data");
    let err = Store::open(&data).err().expect("cannot be created");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "cannot create the data directory {}: ",
            data.display()
        )),
        "{message}"
    );
    assert!(
        message.ends_with("; check that its parent folder exists and can be written"),
        "{message}"
    );
}

#[test]
fn a_write_to_a_read_only_database_names_the_file() {
    // Tests run as root, whom file permissions do not stop; `query_only` makes SQLite answer
    // SQLITE_READONLY exactly as it does for a file it may not write.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let err = store
        .write(|tx| {
            tx.pragma_update(None, "query_only", true)?;
            tx.execute("CREATE TABLE t (x)", [])?;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the database {} is read-only; check the permissions of the file and of its folder",
            dir.path().join(DATABASE_FILE).display()
        )
    );
}

#[test]
fn a_second_open_of_one_data_directory_is_refused_until_the_first_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let first = Store::open(dir.path()).unwrap();
    let err = Store::open(dir.path())
        .err()
        .expect("the directory is in use");
    assert_eq!(
        err.to_string(),
        format!(
            "the data directory {} is in use by another process of the app; close that one and try again",
            dir.path().display()
        )
    );
    drop(first);
    Store::open(dir.path()).unwrap();
}
