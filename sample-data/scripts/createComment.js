// Blog (v2, v3), stored procedure on `posts`, executed with the post's key: counts the
// comment on its post and creates it, in one transaction, so commentCount and the comments
// never disagree. The post is read by its name-based link and replaced through its _self.
function createComment(postId, comment) {
    var collection = getContext().getCollection();
    var postLink = `${collection.getAltLink()}/docs/${postId}`;
    collection.readDocument(postLink, function (err, post) {
        if (err) throw err;
        post.commentCount = (post.commentCount || 0) + 1;
        collection.replaceDocument(post._self, post, function (err) {
            if (err) throw err;
            comment.postId = postId;
            collection.createDocument(collection.getSelfLink(), comment);
        });
    });
}
