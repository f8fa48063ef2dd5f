2word 122
word_2 3452w 12wörd 122word	992word99Bx