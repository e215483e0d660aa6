#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(){ int l=socket(AF_INET,SOCK_STREAM,0); struct sockaddr_in a={.sin_family=AF_INET,.sin_port=htons(18977)}; a.sin_addr.s_addr=htonl(0x7f000001);
 int one=1; setsockopt(l,SOL_SOCKET,SO_REUSEADDR,&one,4); bind(l,(void*)&a,sizeof a); listen(l,1);
 int c=socket(AF_INET,SOCK_STREAM,0); connect(c,(void*)&a,sizeof a); int s=accept(l,0,0);
 setsockopt(c,IPPROTO_TCP,TCP_NODELAY,&one,4); setsockopt(s,IPPROTO_TCP,TCP_NODELAY,&one,4);
 char buf[2048]={0};
 for(int r=0;r<12;r++){ double t0=now();
   for(int i=0;i<20000;i++){ write(c,buf,100); read(s,buf,2048); write(s,buf,1692); int n=0; while(n<1692) n+=read(c,buf,2048);} 
   printf("loopback rtt single-thread %.2f us\n",(now()-t0)/20000*1e6);}
}
