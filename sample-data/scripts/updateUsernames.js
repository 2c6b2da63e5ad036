// Blog (v2, v3), stored procedure on `posts`: sets the author's new username on every
// post, comment and like of theirs in the logical partition it runs in. The guide runs it
// on every partition of `posts` when a user renames (the costly, rare path), with the SQL
// built by interpolation as the guide writes it.
function updateUsernames(userId, username) {
    var collection = getContext().getCollection();
    collection.queryDocuments(
        collection.getSelfLink(),
        `SELECT * FROM p WHERE p.userId = '${userId}'`,
        function (err, results) {
            if (err) throw err;
            for (var i in results) {
                if (results[i].userUsername === username) continue;
                results[i].userUsername = username;
                collection.upsertDocument(collection.getSelfLink(), results[i]);
            }
            getContext().getResponse().setBody(results.length);
        });
}
